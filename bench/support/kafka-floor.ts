/**
 * The cheapest a usage event can pass through Kafka on this machine, per
 * client: records like the ones /v1/collect writes, a message each, fed
 * directly in full-size writes (an idempotent producer, acks=all), then read
 * back by a consumer of the same client that does nothing with them; no
 * HTTP, no validation, no thread hop, no counting. For @platformatic/kafka
 * (the platform's client) the writer is our KafkaUsageLog; for kafkajs (the
 * client it replaced, and the naive pipeline's), kafkajs producers sending
 * the same batches. The broker's JIT warms up first. bench:collect adds these
 * costs per record to the bare handler's and the load generator's to bound
 * what any /v1/collect built on that client could reach on the same cores
 * when it writes every accepted event as a record, read once to be counted.
 */
import { randomUUID } from "node:crypto";
import { Consumer, MessagesStreamModes, type BaseOptions } from "@platformatic/kafka";
import { Kafka, logLevel } from "kafkajs";
import { kafkaOptions } from "../../services/telemetry/kafka/kafka-options.js";
import { KafkaUsageLog } from "../../services/telemetry/kafka/kafka-usage-log.js";
import type { UsageRecord } from "../../services/telemetry/usage-record.js";
import { consume } from "../../test/support/kafka.js";

export type KafkaFloorClient = "@platformatic/kafka" | "kafkajs";

export interface KafkaFloor {
  client: KafkaFloorClient;
  /** Records written per second at the writer's best. */
  writtenPerS: number;
  /** CPU per record, in µs, of writing (the client and our writer) and of reading (the client's consumer), each with the broker's share. */
  writeCpuPerRecordUs: { client: number; broker: number };
  readCpuPerRecordUs: { client: number; broker: number };
}

/** Records per write: the writer's largest produce request. */
const WRITE_RECORDS = 2000;
/** Writes in flight at once: enough to keep the writer's requests in flight busy. */
const CONCURRENT_WRITES = 6;
const WARMUP_S = 5;
const READ_TIMEOUT_MS = 120_000;

/** A record shaped like the ones /v1/collect writes for the benchmark's reports. */
function usageRecord(licenseKey: string, index: number, at: string): UsageRecord {
  return {
    eventId: randomUUID(),
    licenseKey,
    documentId: `HASH-${index.toString(16).toUpperCase().padStart(8, "0")}`,
    documentCreatedAt: null,
    openedAt: at,
    receivedAt: at,
    libraryVersion: "0.20.0",
    hostname: "app.example.test",
    metadata: {},
  };
}

/** CPU of this process and of the broker while `work` runs, per record it reports. */
async function cpuPerRecord(brokerCpuS: () => number, work: () => Promise<number>): Promise<{ client: number; broker: number; records: number; seconds: number }> {
  const ownBefore = process.cpuUsage();
  const brokerBefore = brokerCpuS();
  const started = performance.now();
  const records = await work();
  const seconds = (performance.now() - started) / 1000;
  const own = process.cpuUsage(ownBefore);
  return { client: (own.user + own.system) / records, broker: ((brokerCpuS() - brokerBefore) / records) * 1e6, records, seconds };
}

/** A writer and a reader of one topic with one client. */
interface FloorClient {
  write(records: UsageRecord[]): Promise<void>;
  /** Reads the topic from the start until `count` records came by; resolves with that count. */
  readAll(count: number): Promise<number>;
  close(): Promise<void>;
}

function platformaticClient(brokers: string[], topic: string): FloorClient {
  const options = kafkaOptions(brokers, "bench-kafka-floor");
  const log = new KafkaUsageLog(options, topic);
  // one message per record: the floor of a pipeline that writes every event as a record of its own
  const write = (records: UsageRecord[]) =>
    log.writeSerialized(
      records.map((record) => record.licenseKey),
      records.map((record) => JSON.stringify(record)),
    );
  return { write, readAll: (count) => readAllPlatformatic(options, topic, count), close: () => log.close() };
}

function kafkajsClient(brokers: string[], topic: string): FloorClient {
  const kafka = new Kafka({ clientId: "bench-kafka-floor-kafkajs", brokers, logLevel: logLevel.NOTHING });
  // one request in flight per idempotent producer, as kafkajs requires for ordered sequence numbers
  const producers = Array.from({ length: CONCURRENT_WRITES }, () => kafka.producer({ idempotent: true, maxInFlightRequests: 1 }));
  const idle = [...producers];
  const connected = Promise.all(producers.map((producer) => producer.connect()));
  return {
    async write(records) {
      await connected;
      const producer = idle.pop()!;
      try {
        await producer.send({ topic, acks: -1, messages: records.map((record) => ({ key: record.licenseKey, value: JSON.stringify(record) })) });
      } finally {
        idle.push(producer);
      }
    },
    async readAll(count) {
      let read = 0;
      await consume(
        kafka,
        topic,
        `bench-kafka-floor-${randomUUID()}`,
        (done) => ({
          eachBatch: async ({ batch }) => {
            read += batch.messages.length;
            if (read >= count) done();
          },
        }),
        { ms: READ_TIMEOUT_MS, progress: () => `read ${read} of ${count} records in ${READ_TIMEOUT_MS / 1000} s` },
      );
      return read;
    },
    close: () => Promise.all(producers.map((producer) => producer.disconnect())).then(() => undefined),
  };
}

/** Writes full-size batches with `client` for `seconds` (after a warm-up), reads everything back, and reports the CPU per record of each side. */
export async function measureKafkaFloor(
  client: KafkaFloorClient,
  brokers: string[],
  brokerCpuS: () => number,
  seconds: number,
  licenseKey: string,
): Promise<KafkaFloor> {
  const topic = `bench.kafka-floor.${client.replace(/[^a-z]/g, "")}`;
  const floorClient = client === "kafkajs" ? kafkajsClient(brokers, topic) : platformaticClient(brokers, topic);
  const at = new Date().toISOString();
  let total = 0;
  const writeFor = async (ms: number) => {
    let written = 0;
    const deadline = performance.now() + ms;
    await Promise.all(
      Array.from({ length: CONCURRENT_WRITES }, async () => {
        while (performance.now() < deadline) {
          // Records are built inside the measurement: the service builds one per event too.
          await floorClient.write(Array.from({ length: WRITE_RECORDS }, (_, i) => usageRecord(licenseKey, i, at)));
          written += WRITE_RECORDS;
        }
      }),
    );
    total += written;
    return written;
  };
  try {
    await writeFor(WARMUP_S * 1000);
    const write = await cpuPerRecord(brokerCpuS, () => writeFor(seconds * 1000));
    const read = await cpuPerRecord(brokerCpuS, () => floorClient.readAll(total));
    return {
      client,
      writtenPerS: write.records / write.seconds,
      writeCpuPerRecordUs: { client: write.client, broker: write.broker },
      readCpuPerRecordUs: { client: read.client, broker: read.broker },
    };
  } finally {
    await floorClient.close();
  }
}

async function readAllPlatformatic(options: BaseOptions, topic: string, count: number): Promise<number> {
  const consumer = new Consumer({ ...options, groupId: `bench-kafka-floor-${randomUUID()}`, autocommit: false });
  let read = 0;
  try {
    const stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.EARLIEST });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${read} of ${count} records in ${READ_TIMEOUT_MS / 1000} s`)), READ_TIMEOUT_MS);
      stream.once("error", reject);
      stream.on("data", () => {
        if (++read < count) return;
        clearTimeout(timer);
        resolve();
      });
    });
  } finally {
    await consumer.close(true);
  }
  return read;
}
