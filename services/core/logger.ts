import { pino, type Logger } from "pino";
import { activeTraceFields } from "./tracing.js";

export type { Logger };

const FLUSH_INTERVAL_MS = 1000;

/**
 * Lines are written once 64 KB of them wait (in writes of up to 256 KB): the
 * access log is on the hot path, and a write's cost is mostly per write, not
 * per byte; sonic-boom is patched (patches/) to stop measuring its growing
 * buffer on every write, which made a large buffer cost more per line. The
 * figures: bench/README.md, "Log buffer".
 */
export const LOG_BUFFER = { minLength: 64 * 1024, maxWrite: 256 * 1024 };

/**
 * JSON logs on stdout; secrets never reach them. The access log is on the hot
 * path, so lines are buffered and written in large pieces, at least once a
 * second (as Envoy does with its access log), and on exit. A flush that comes
 * while a write is under way takes effect when it ends (sonic-boom patched:
 * it did nothing, and the lines waited another second).
 */
export function createLogger(level: string, options: { traced?: boolean } = {}): Logger {
  const destination = pino.destination({ dest: 1, sync: false, ...LOG_BUFFER });
  setInterval(() => destination.flush(), FLUSH_INTERVAL_MS).unref();
  // traced: a line written inside a traced request names its trace and span, to go from a trace to its lines and back
  const mixin = options.traced ? activeTraceFields : undefined;
  return pino({ level, base: { app: "docservice" }, redact: ["apiKey", "code", "password", "authorization"], mixin }, destination);
}
