import { Kafka, logLevel, type LogEntry } from "kafkajs";
import type { Logger } from "../../core/logger.js";

const LEVELS: Record<number, "error" | "warn" | "info" | "debug"> = {
  [logLevel.ERROR]: "error",
  [logLevel.WARN]: "warn",
  [logLevel.INFO]: "info",
  [logLevel.DEBUG]: "debug",
};

/**
 * A kafkajs client logging through pino. kafkajs reports errors it then
 * retries by itself at ERROR; they are logged at warn, and only from WARN up.
 */
export function kafkaClient(brokers: string[], clientId: string, logger: Logger): Kafka {
  return new Kafka({
    clientId,
    brokers,
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      const { message, ...extra } = entry.log;
      const level = entry.level === logLevel.ERROR ? "warn" : (LEVELS[entry.level] ?? "debug");
      logger[level]({ kafka: entry.namespace, ...extra }, message);
    },
  });
}
