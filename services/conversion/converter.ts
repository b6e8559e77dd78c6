import type { HealthCheck } from "../core/health.js";
import type { ConvertTarget } from "./convert-target.js";
import type { FormatSpec } from "./source-format.js";

/** What a converter holds right now: the saturation its autoscaler and alerts watch. */
export interface ConverterLoad {
  /** Conversions waiting for a free LibreOffice instance (always 0 for Gotenberg, which queues on its side). */
  waiting: number;
  converting: number;
}

/** Turns a checked document into the target's bytes. The LibreOffice pool and Gotenberg are the two implementations. */
export interface Converter {
  convert(document: Buffer, format: FormatSpec, target?: ConvertTarget): Promise<Buffer>;
  load(): ConverterLoad;
  health: HealthCheck;
  close(): Promise<void>;
}
