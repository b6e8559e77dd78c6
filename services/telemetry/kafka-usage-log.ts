import { Partitioners, type ICustomPartitioner, type Kafka, type Producer } from "kafkajs";
import type { RecordSink } from "./record-sink.js";
import type { UsageRecord } from "./usage-record.js";

/** Records per produce request: well under Kafka's 1 MB default batch limit at ~300 bytes a record. */
const MAX_BATCH_RECORDS = 2000;

interface Waiting {
  records: UsageRecord[];
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Writes usage records to the Kafka topic with an idempotent producer and
 * acks=all, keyed by license key (one key's events stay in order on one
 * partition). Writes that arrive while a produce request is in flight are
 * sent together in the next one, so throughput grows with load instead of
 * paying a round trip per report.
 */
export class KafkaUsageLog implements RecordSink {
  private readonly producer: Producer;
  private connected: Promise<void> | undefined;
  private waiting: Waiting[] = [];
  private sending = false;

  constructor(
    kafka: Kafka,
    private readonly topic: string,
  ) {
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: keyCachingPartitioner,
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    this.producer.on(this.producer.events.DISCONNECT, () => {
      this.connected = undefined;
    });
  }

  write(records: UsageRecord[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ records, resolve, reject });
      if (!this.sending) void this.send();
    });
  }

  async close(): Promise<void> {
    await this.producer.disconnect();
  }

  private async send(): Promise<void> {
    this.sending = true;
    while (this.waiting.length > 0) {
      const batch = this.takeBatch();
      try {
        this.connected ??= this.producer.connect();
        await this.connected;
        await this.producer.send({
          topic: this.topic,
          acks: -1,
          messages: batch.flatMap((entry) => entry.records.map((record) => ({ key: record.licenseKey, value: JSON.stringify(record) }))),
        });
        batch.forEach((entry) => entry.resolve());
      } catch (error) {
        this.connected = undefined;
        batch.forEach((entry) => entry.reject(error));
      }
    }
    this.sending = false;
  }

  private takeBatch(): Waiting[] {
    let count = 0;
    let taken = 0;
    while (taken < this.waiting.length && (taken === 0 || count + this.waiting[taken].records.length <= MAX_BATCH_RECORDS)) {
      count += this.waiting[taken].records.length;
      taken++;
    }
    return this.waiting.splice(0, taken);
  }
}

/** Keys whose partition is remembered; beyond, the memory starts over. */
const MAX_CACHED_KEYS = 10_000;

/**
 * kafkajs' DefaultPartitioner (murmur2 of the key modulo the partition count,
 * as the Java client), remembered per key and partition count: every record
 * of a license key has the same key, and hashing it took about 2 µs per
 * record. The partitions are the default partitioner's.
 */
const keyCachingPartitioner: ICustomPartitioner = () => {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitions = new Map<string, number>();
  let partitionCount = -1;
  let topic = "";
  return (args) => {
    const { key, partition } = args.message;
    if (typeof key !== "string" || (partition !== undefined && partition !== null)) return partitioner(args);
    if (args.partitionMetadata.length !== partitionCount || args.topic !== topic || partitions.size >= MAX_CACHED_KEYS) {
      partitions.clear();
      partitionCount = args.partitionMetadata.length;
      topic = args.topic;
    }
    let chosen = partitions.get(key);
    if (chosen === undefined) partitions.set(key, (chosen = partitioner(args)));
    return chosen;
  };
};
