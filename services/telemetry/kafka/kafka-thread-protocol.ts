import type { PlatformConfig } from "../../core/config.js";
import type { TelemetryConfig } from "../config.js";
import type { LogPosition } from "../intake/log-position.js";

/** What a Kafka thread is started with. */
export interface KafkaThreadSetup {
  config: PlatformConfig & TelemetryConfig;
  /** The producer writing accepted records, or the usage aggregator (the consumer group counting them). */
  role: "producer" | "aggregator";
  /** Set when the process exports traces: the thread exports its spans under this service name too. */
  tracedAs?: string;
}

export type ToKafkaThread =
  /** Records as JSON, with their license keys (strings cross threads far cheaper than objects). */
  /** `traces`: when traced, the traceparent of each record's request ("" for none), sent as its Kafka header. */
  | { type: "write"; batchId: number; keys: string[]; values: string[]; traces?: string[] }
  | { type: "alreadyLogged"; requestId: number; eventIds: string[]; since: LogPosition }
  | { type: "close" };

export type FromKafkaThread =
  | { type: "written"; batchId: number; position?: LogPosition; error?: string }
  | { type: "position"; position: LogPosition }
  | { type: "alreadyLogged"; requestId: number; eventIds?: string[]; error?: string }
  | { type: "lag"; byPartition: Array<[number, number]> }
  | { type: "applied"; events: number };
