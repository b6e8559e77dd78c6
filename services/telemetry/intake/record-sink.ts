import type { UsageRecord } from "../usage-record.js";

/** Where accepted usage records go: Kafka in production, the usage store itself in embedded mode. Resolves once they are durable there. */
export interface RecordSink {
  write(records: UsageRecord[]): Promise<void>;
}
