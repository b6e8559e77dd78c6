/**
 * The cheapest a usage event can pass through Kafka on this machine: written
 * by our Kafka writer (KafkaUsageLog: @platformatic/kafka, an idempotent
 * producer, acks=all, JSON records) fed directly with full-size writes, then
 * read back by a consumer of the same client that does nothing with the
 * records; no HTTP, no validation, no thread hop, no counting. The broker's
 * JIT warms up first. bench:collect adds these costs per record to the bare
 * handler's and the load generator's to bound what any /v1/collect built on
 * this client could reach on the same cores, since every accepted event is
 * written and read once to be counted.
 */
import { randomUUID } from "node:crypto";
import { Consumer, MessagesStreamModes, type BaseOptions } from "@platformatic/kafka";
import { kafkaOptions } from "../../services/telemetry/kafka/kafka-options.js";
import { KafkaUsageLog } from "../../services/telemetry/kafka/kafka-usage-log.js";
import type { UsageRecord } from "../../services/telemetry/usage-record.js";

export interface KafkaFloor {
  /** Records written per second at the writer's best. */
  writtenPerS: number;
  /** CPU per record, in µs, of writing (the client and our writer) and of reading (the client's consumer), each with the broker's share. */
  writeCpuPerRecordUs: { client: number; broker: number };
  readCpuPerRecordUs: { client: number; broker: number };
}

const TOPIC = "bench.kafka-floor";
/** Records per write: the writer's largest produce request. */
const WRITE_RECORDS = 2000;
/** Writes in flight at once: enough to keep every producer of the writer busy. */
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

/** Writes full-size batches for `seconds` (after a warm-up), reads everything back, and reports the CPU per record of each side. */
export async function measureKafkaFloor(brokers: string[], brokerCpuS: () => number, seconds: number, licenseKey: string): Promise<KafkaFloor> {
  const options = kafkaOptions(brokers, "bench-kafka-floor");
  const log = new KafkaUsageLog(options, TOPIC);
  const at = new Date().toISOString();
  let total = 0;
  const writeFor = async (ms: number) => {
    let written = 0;
    const deadline = performance.now() + ms;
    await Promise.all(
      Array.from({ length: CONCURRENT_WRITES }, async () => {
        while (performance.now() < deadline) {
          // Records are built inside the measurement: the service builds one per event too.
          await log.write(Array.from({ length: WRITE_RECORDS }, (_, i) => usageRecord(licenseKey, i, at)));
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
    const read = await cpuPerRecord(brokerCpuS, () => readAll(options, total));
    return {
      writtenPerS: write.records / write.seconds,
      writeCpuPerRecordUs: { client: write.client, broker: write.broker },
      readCpuPerRecordUs: { client: read.client, broker: read.broker },
    };
  } finally {
    await log.close();
  }
}

/** Reads the topic from the start with a consumer until `count` records came by; resolves with that count. */
async function readAll(options: BaseOptions, count: number): Promise<number> {
  const consumer = new Consumer({ ...options, groupId: `bench-kafka-floor-${randomUUID()}`, autocommit: false });
  let read = 0;
  try {
    const stream = await consumer.consume({ topics: [TOPIC], mode: MessagesStreamModes.EARLIEST });
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
