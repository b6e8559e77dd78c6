/**
 * The cheapest way a usage event gets into Kafka on this machine: our Kafka
 * writer (KafkaUsageLog: kafkajs, idempotent producers, acks=all, JSON
 * records) fed directly with full-size writes, with no HTTP, no validation,
 * no thread hop and no aggregation, once the broker's JIT has warmed up.
 * bench:collect adds its CPU per record to the bare handler's and the load
 * generator's to bound what any /v1/collect built on kafkajs could reach on
 * the same cores.
 */
import { randomUUID } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { KafkaUsageLog } from "../../services/telemetry/kafka-usage-log.js";
import type { UsageRecord } from "../../services/telemetry/usage-record.js";

export interface WriterFloor {
  recordsPerS: number;
  /** CPU of kafkajs and our writer (this process) per record, in µs. */
  writerCpuPerRecordUs: number;
  /** CPU of the Kafka broker per record, in µs. */
  brokerCpuPerRecordUs: number;
}

const TOPIC = "bench.writer-floor";
/** Records per write: the writer's largest produce request. */
const WRITE_RECORDS = 2000;
/** Writes in flight at once: enough to keep every producer of the writer busy. */
const CONCURRENT_WRITES = 6;
const WARMUP_S = 5;

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

/** Writes full-size batches for `seconds` (after a warm-up) and reports the CPU per record of the writer and the broker. */
export async function measureKafkaWriterFloor(brokers: string[], brokerCpuS: () => number, seconds: number, licenseKey: string): Promise<WriterFloor> {
  const log = new KafkaUsageLog(new Kafka({ clientId: "bench-writer-floor", brokers, logLevel: logLevel.NOTHING }), TOPIC);
  const at = new Date().toISOString();
  let written = 0;
  const writeFor = async (ms: number) => {
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
  };
  try {
    await writeFor(WARMUP_S * 1000);
    written = 0;
    const ownBefore = process.cpuUsage();
    const brokerBefore = brokerCpuS();
    const started = performance.now();
    await writeFor(seconds * 1000);
    const elapsedS = (performance.now() - started) / 1000;
    const own = process.cpuUsage(ownBefore);
    return {
      recordsPerS: written / elapsedS,
      writerCpuPerRecordUs: (own.user + own.system) / written,
      brokerCpuPerRecordUs: ((brokerCpuS() - brokerBefore) / written) * 1e6,
    };
  } finally {
    await log.close();
  }
}
