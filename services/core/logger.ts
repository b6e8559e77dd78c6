import { pino, type Logger } from "pino";

export type { Logger };

/** JSON logs on stdout; secrets never reach them. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { app: "docservice" },
    redact: ["apiKey", "*.apiKey", "code", "*.code", "password", "*.password", "authorization", "*.authorization"],
  });
}
