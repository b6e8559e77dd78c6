import { pino, type Logger } from "pino";

export type { Logger };

const FLUSH_INTERVAL_MS = 1000;

/**
 * JSON logs on stdout; secrets never reach them. The access log is on the hot
 * path, so lines are buffered and written a few KB at a time, at least once a
 * second (as Envoy does with its access log), and on exit.
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_INTERVAL_MS).unref();
  return pino({ level, base: { app: "docservice" }, redact: ["apiKey", "code", "password", "authorization"] }, destination);
}
