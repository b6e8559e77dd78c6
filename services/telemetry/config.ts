import { z } from "zod";
import { type ConfigOf, optionalText, positiveInt, variable } from "../core/config.js";

/** Usage telemetry: Kafka and the spool (a report's limits are the client library's own: clients/telemetry/report-limits.ts, metadata.ts). docs/configuration.md's reference lists each one (a test checks). */
export const TELEMETRY_VARIABLES = {
  kafkaBrokers: variable(
    "KAFKA_BROKERS",
    z
      .string()
      .optional()
      .transform((v) => (v ?? "").split(",").map((b) => b.trim()).filter(Boolean)),
    undefined,
    "Comma-separated Kafka brokers (host:port) for usage events; unset means the embedded in-process pipeline and store.",
  ),
  telemetryTopic: variable("TELEMETRY_TOPIC", z.string().regex(/^[\w.-]{1,249}$/, "a Kafka topic name"), "docservice.usage.v1", "Kafka topic of usage events."),
  telemetryConsumerGroup: variable("TELEMETRY_CONSUMER_GROUP", z.string().min(1), "docservice-usage-aggregator", "Kafka consumer group of the usage aggregator."),
  telemetryDirectTimeoutMs: variable("TELEMETRY_DIRECT_TIMEOUT_MS", positiveInt, "1000", "How long a report waits for Kafka before its events go to the local spool instead."),
  telemetrySpoolHandOverMs: variable(
    "TELEMETRY_SPOOL_HANDOVER_MS",
    positiveInt,
    "10000",
    "At shutdown, how long the local spool may take to reach Kafka before it is left on disk for the next start with the same data directory (a pod's emptyDir goes with the pod).",
  ),
  telemetrySpoolMaxBytes: variable("TELEMETRY_SPOOL_MAX_BYTES", positiveInt, "1073741824", "Largest local spool of usage events (while Kafka is away); beyond it reports get 503 with Retry-After."),
  telemetryServiceAddress: variable("TELEMETRY_SERVICE_ADDR", optionalText, undefined, "host:port of TelemetryService for a gateway started alone (unset there: its routes answer 503)."),
};

export type TelemetryConfig = ConfigOf<typeof TELEMETRY_VARIABLES>;
