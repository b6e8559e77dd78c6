import type { HealthCheck } from "../core/health.js";
import type { FormatSpec } from "./source-format.js";

/** Turns a checked document into PDF bytes. The LibreOffice pool and Gotenberg are the two implementations. */
export interface Converter {
  convert(document: Buffer, format: FormatSpec, filename: string): Promise<Buffer>;
  health: HealthCheck;
  close(): Promise<void>;
}
