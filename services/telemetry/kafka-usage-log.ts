import { Partitioners, type ICustomPartitioner, type Kafka, type Message, type Producer } from "kafkajs";
import type { PendingWrite, RecordSink } from "./record-sink.js";
import type { UsageRecord } from "./usage-record.js";

/**
 * Records per produce request: well under Kafka's 1 MB default batch limit at
 * ~300 bytes a record, and small enough for kafkajs, whose grouping of a
 * request's records by partition costs time quadratic in their number.
 */
const MAX_BATCH_RECORDS = 500;
/**
 * Produce requests in flight at once. kafkajs lets an idempotent producer have
 * one request in flight per broker, so a request waits for the one before it;
 * several producers (each idempotent) overlap their round trips. Records of
 * one license key may then land out of order, which counting does not mind:
 * sets, sums and first/last seen do not depend on order.
 */
const PRODUCERS = 3;

/**
 * Writes usage records to the Kafka topic with idempotent producers and
 * acks=all, keyed by license key (one key's events share a partition).
 * Writes that arrive while every producer has a request in flight are sent
 * together in the next one, so throughput grows with load instead of paying a
 * round trip per report.
 */
export class KafkaUsageLog implements RecordSink {
  private readonly slots: ProducerSlot[];
  private readonly idle: ProducerSlot[];
  private waiting: PendingWrite[] = [];

  constructor(
    kafka: Kafka,
    private readonly topic: string,
  ) {
    this.slots = Array.from({ length: PRODUCERS }, () => new ProducerSlot(kafka));
    this.idle = [...this.slots];
  }

  /** Many records are cut into requests of MAX_BATCH_RECORDS, so idle producers send them side by side. */
  write(records: UsageRecord[]): Promise<void> {
    const parts: Array<Promise<void>> = [];
    for (let i = 0; i < records.length; i += MAX_BATCH_RECORDS) parts.push(this.enqueue(records.slice(i, i + MAX_BATCH_RECORDS)));
    return Promise.all(parts).then(() => undefined);
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot.producer.disconnect()));
  }

  private enqueue(records: UsageRecord[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ records, resolve, reject });
      const slot = this.idle.pop();
      if (slot) void this.send(slot);
    });
  }

  private async send(slot: ProducerSlot): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.takeBatch();
      try {
        await slot.send(
          this.topic,
          batch.flatMap((entry) => entry.records.map((record) => ({ key: record.licenseKey, value: JSON.stringify(record) }))),
        );
        batch.forEach((entry) => entry.resolve());
      } catch (error) {
        batch.forEach((entry) => entry.reject(error));
      }
    }
    this.idle.push(slot);
  }

  private takeBatch(): PendingWrite[] {
    let count = 0;
    let taken = 0;
    while (taken < this.waiting.length && (taken === 0 || count + this.waiting[taken].records.length <= MAX_BATCH_RECORDS)) {
      count += this.waiting[taken].records.length;
      taken++;
    }
    return this.waiting.splice(0, taken);
  }
}

/** One idempotent producer, connected on first use and again after a disconnect. */
class ProducerSlot {
  readonly producer: Producer;
  private connected: Promise<void> | undefined;

  constructor(kafka: Kafka) {
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

  async send(topic: string, messages: Message[]): Promise<void> {
    try {
      this.connected ??= this.producer.connect();
      await this.connected;
      await this.producer.send({ topic, acks: -1, messages });
    } catch (error) {
      this.connected = undefined;
      throw error;
    }
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
