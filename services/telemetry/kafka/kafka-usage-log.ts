import { compatibilityPartitioner, ProduceAcks, Producer, stringSerializers, type BaseOptions, type MessageToProduce, type Partitioner } from "@platformatic/kafka";
import type { LogPosition } from "../intake/log-position.js";
import type { RecordSink } from "../intake/record-sink.js";
import { serializeUsageRecords, type UsageRecord } from "../usage-record.js";

type Message = MessageToProduce<string, string, string, string>;

/** Records per produce request: large requests cost the broker and the client less per record. */
const MAX_REQUEST_RECORDS = 2000;
/**
 * Bytes of keys and values per produce request: a partition's records travel
 * as one record batch, and the broker refuses a batch over its
 * `message.max.bytes` (1 MiB by default), which 2,000 records with the
 * largest metadata allowed would pass.
 */
const MAX_REQUEST_BYTES = 512 * 1024;
/**
 * Produce requests in flight at once. The idempotent producer numbers each
 * partition's records when a send starts, so sends overlap their round trips;
 * records of one license key may then land out of order, which counting does
 * not mind: sets, sums and first/last seen do not depend on order.
 */
const IN_FLIGHT = 3;

/** Messages waiting to be sent with others, and how to answer their write. */
interface PendingMessages {
  messages: Message[];
  bytes: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Writes usage records to the Kafka topic with an idempotent producer and
 * acks=all, keyed by license key (one key's events share a partition, chosen
 * as the Java client and kafkajs choose it). Writes that arrive while
 * IN_FLIGHT requests are out are sent together in the next one, so
 * throughput grows with load instead of paying a round trip per report. It
 * keeps the log's position as the produce responses tell it (the base offset
 * each write got per partition).
 *
 * A send that fails has an unknown outcome: the broker may have appended its
 * records without the answer arriving. The library then starts over with a
 * new producer id, so its later records are never numbered as retries of
 * those; the spool's read-back finds what the failed send wrote.
 */
export class KafkaUsageLog implements RecordSink {
  private readonly producer: Producer<string, string, string, string>;
  private inFlight = 0;
  private waiting: PendingMessages[] = [];
  private known: LogPosition = {};

  constructor(
    options: BaseOptions,
    private readonly topic: string,
  ) {
    this.producer = new Producer({ ...options, idempotent: true, acks: ProduceAcks.ALL, partitioner: keyCachingPartitioner(), serializers: stringSerializers });
  }

  write(records: UsageRecord[]): Promise<void> {
    const { keys, values } = serializeUsageRecords(records);
    return this.writeSerialized(keys, values);
  }

  /**
   * Records already as JSON (`values`), with their license keys: what the
   * Kafka thread receives, since strings cross threads far cheaper than
   * objects. A write too large for one produce request is cut into parts,
   * which idle producers send side by side. `traces`, when given, holds each
   * record's traceparent ("" for none), written as its header, so the
   * aggregator's span that applies it links back to the request.
   */
  writeSerialized(keys: string[], values: string[], traces?: string[]): Promise<void> {
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
      const traceparent = traces?.[i];
      messages.push(traceparent ? { topic: this.topic, key: keys[i], value: values[i], headers: { traceparent } } : { topic: this.topic, key: keys[i], value: values[i] });
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
    await this.producer.close();
  }

  private advance(partition: number, offset: number): void {
    if (!(offset <= this.known[partition])) this.known[partition] = offset;
  }

  private enqueue(messages: Message[], bytes: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ messages, bytes, resolve, reject });
      this.sendWaiting();
    });
  }

  private sendWaiting(): void {
    while (this.waiting.length > 0 && this.inFlight < IN_FLIGHT) {
      const batch = this.takeBatch();
      this.inFlight++;
      this.producer
        .send({ messages: batch.length === 1 ? batch[0].messages : batch.flatMap((entry) => entry.messages) })
        .then(
          (written) => {
            for (const { partition, offset } of written.offsets ?? []) this.advance(partition, Number(offset));
            batch.forEach((entry) => entry.resolve());
          },
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.inFlight--;
          this.sendWaiting();
        });
    }
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

/** Keys whose partition is remembered; beyond, the memory starts over. */
const MAX_CACHED_KEYS = 10_000;

/**
 * The Java client's partitioner (murmur2 of the key, made positive; the
 * producer takes it modulo the partition count), remembered per key: every
 * record of a license key has the same key, so hashing it again for every
 * record is work thrown away on the hot path (bench/README.md, "Kafka
 * partitioner").
 */
function keyCachingPartitioner(): Partitioner<string, string, string, string> {
  const hashes = new Map<string, number>();
  return (message, key) => {
    if (message.key === undefined) return compatibilityPartitioner(message, key);
    let hash = hashes.get(message.key);
    if (hash === undefined) {
      if (hashes.size >= MAX_CACHED_KEYS) hashes.clear();
      hashes.set(message.key, (hash = compatibilityPartitioner(message, key)));
    }
    return hash;
  };
}
