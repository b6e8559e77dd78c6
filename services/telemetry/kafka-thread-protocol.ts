import type { Config } from "../core/config.js";
import type { UsageRecord } from "./usage-record.js";

/** What the Kafka thread is started with. */
export interface KafkaThreadSetup {
  config: Config;
  /** Also run the usage aggregator (the consumer group) on the thread. */
  withAggregator: boolean;
}

export type ToKafkaThread = { type: "write"; batchId: number; records: UsageRecord[] } | { type: "close" };

export type FromKafkaThread =
  | { type: "written"; batchId: number; error?: string }
  | { type: "lag"; records: number }
  | { type: "closed" };
