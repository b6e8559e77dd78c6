import type { HealthCheck } from "../core/health.js";
import type { ConvertTarget } from "./convert-target.js";
import type { FormatSpec } from "./source-format.js";

/** Turns a checked document into the target's bytes. The LibreOffice pool and Gotenberg are the two implementations. */
export interface Converter {
  convert(document: Buffer, format: FormatSpec, target?: ConvertTarget): Promise<Buffer>;
  health: HealthCheck;
  close(): Promise<void>;
}
