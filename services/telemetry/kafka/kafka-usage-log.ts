import { Partitioners, type ICustomPartitioner, type Kafka, type Message, type Producer, type RecordMetadata } from "kafkajs";
import type { LogPosition } from "../intake/log-position.js";
import type { RecordSink } from "../intake/record-sink.js";
import type { UsageRecord } from "../usage-record.js";

/**
 * Records per produce request. Large requests cost the broker and kafkajs
 * less per record (kafkajs is patched to group a request's records by
 * partition in linear time).
 */
const MAX_REQUEST_RECORDS = 2000;
/**
 * Bytes of keys and values per produce request: a partition's records travel
 * as one record batch, and the broker refuses a batch over its
 * `message.max.bytes` (1 MiB by default), which 2,000 records with the
 * largest metadata allowed would pass.
 */
const MAX_REQUEST_BYTES = 512 * 1024;
/**
 * Produce requests in flight at once. kafkajs lets an idempotent producer have
 * one request in flight per broker, so a request waits for the one before it;
 * several producers (each idempotent) overlap their round trips. Records of
 * one license key may then land out of order, which counting does not mind:
 * sets, sums and first/last seen do not depend on order.
 */
const PRODUCERS = 3;

/** Messages waiting to be sent with others, and how to answer their write. */
interface PendingMessages {
  messages: Message[];
  bytes: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Writes usage records to the Kafka topic with idempotent producers and
 * acks=all, keyed by license key (one key's events share a partition).
 * Writes that arrive while every producer has a request in flight are sent
 * together in the next one, so throughput grows with load instead of paying a
 * round trip per report. It keeps the log's position as the produce
 * responses tell it (the base offset each write got per partition).
 */
export class KafkaUsageLog implements RecordSink {
  private readonly slots: ProducerSlot[];
  private readonly idle: ProducerSlot[];
  private waiting: PendingMessages[] = [];
  private known: LogPosition = {};

  constructor(
    kafka: Kafka,
    private readonly topic: string,
  ) {
    this.slots = Array.from({ length: PRODUCERS }, () => new ProducerSlot(kafka));
    this.idle = [...this.slots];
  }

  write(records: UsageRecord[]): Promise<void> {
    return this.writeSerialized(
      records.map((record) => record.licenseKey),
      records.map((record) => JSON.stringify(record)),
    );
  }

  /**
   * Records already as JSON (`values`), with their license keys: what the
   * Kafka thread receives, since strings cross threads far cheaper than
   * objects. A write too large for one produce request is cut into parts,
   * which idle producers send side by side.
   */
  writeSerialized(keys: string[], values: string[]): Promise<void> {
    const parts: Array<Promise<void>> = [];
    let messages: Message[] = [];
    let bytes = 0;
    for (let i = 0; i < values.length; i++) {
      const size = Buffer.byteLength(values[i]) + Buffer.byteLength(keys[i]);
      if (messages.length === MAX_REQUEST_RECORDS || (messages.length > 0 && bytes + size > MAX_REQUEST_BYTES)) {
        parts.push(this.enqueue(messages, bytes));
        messages = [];
        bytes = 0;
      }
      messages.push({ key: keys[i], value: values[i] });
      bytes += size;
    }
    if (messages.length > 0) parts.push(this.enqueue(messages, bytes));
    return Promise.all(parts).then(() => undefined);
  }

  /** The log's position as the produce responses so far tell it. */
  position(): LogPosition {
    return { ...this.known };
  }

  /** Moves the position forward to offsets learned elsewhere (the topic's high watermarks at start). */
  learn(position: LogPosition): void {
    for (const [partition, offset] of Object.entries(position)) this.advance(Number(partition), offset);
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot.close()));
  }

  private advance(partition: number, offset: number): void {
    if (!(offset <= this.known[partition])) this.known[partition] = offset;
  }

  private enqueue(messages: Message[], bytes: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ messages, bytes, resolve, reject });
      const slot = this.idle.pop();
      if (slot) void this.send(slot);
    });
  }

  private async send(slot: ProducerSlot): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.takeBatch();
      try {
        const written = await slot.send(this.topic, batch.length === 1 ? batch[0].messages : batch.flatMap((entry) => entry.messages));
        for (const { partition, baseOffset } of written) if (baseOffset !== undefined) this.advance(partition, Number(baseOffset));
        batch.forEach((entry) => entry.resolve());
      } catch (error) {
        batch.forEach((entry) => entry.reject(error));
      }
    }
    this.idle.push(slot);
  }

  /** The oldest waiting writes that fit in one produce request (always at least one). */
  private takeBatch(): PendingMessages[] {
    let records = 0;
    let bytes = 0;
    let taken = 0;
    for (; taken < this.waiting.length; taken++) {
      const next = this.waiting[taken];
      if (taken > 0 && (records + next.messages.length > MAX_REQUEST_RECORDS || bytes + next.bytes > MAX_REQUEST_BYTES)) break;
      records += next.messages.length;
      bytes += next.bytes;
    }
    return this.waiting.splice(0, taken);
  }
}

/**
 * One idempotent producer, connected on first use, and replaced after a send
 * that failed. A failed send's outcome is unknown: the broker may have
 * appended its records without the answer arriving (it died or stalled
 * first). kafkajs would go on numbering records as if it had not, and the
 * broker would then refuse every later request of the producer (out of order
 * sequence number) or, worse, answer a later request of the same size as a
 * retry of the appended one without writing it. A new producer (a new
 * producer id) numbers afresh; the spool's read-back finds what the failed
 * send wrote.
 */
class ProducerSlot {
  private producer: Producer | undefined;
  private connected: Promise<void> | undefined;

  constructor(private readonly kafka: Kafka) {}

  async send(topic: string, messages: Message[]): Promise<RecordMetadata[]> {
    const producer = this.current();
    try {
      await this.connected;
      return await producer.send({ topic, acks: -1, messages });
    } catch (error) {
      this.drop(producer);
      throw error;
    }
  }

  async close(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    await producer?.disconnect();
  }

  private current(): Producer {
    if (this.producer) return this.producer;
    const producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: keyCachingPartitioner,
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    producer.on(producer.events.DISCONNECT, () => this.drop(producer));
    this.producer = producer;
    this.connected = producer.connect();
    return producer;
  }

  private drop(producer: Producer): void {
    if (this.producer !== producer) return;
    this.producer = undefined;
    this.connected = undefined;
    void producer.disconnect().catch(() => {});
  }
}

/** Keys whose partition is remembered; beyond, the memory starts over. */
const MAX_CACHED_KEYS = 10_000;

/**
 * kafkajs' DefaultPartitioner (murmur2 of the key modulo the partition count,
 * as the Java client), remembered per key and partition count: every record
 * of a license key has the same key, so hashing it again for every record is
 * work thrown away on the hot path (bench/README.md, "Kafka partitioner").
 * The partitions are the default partitioner's.
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
