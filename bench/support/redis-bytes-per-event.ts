/**
 * Redis memory of the usage counts per event, for bench:collect: 1,000,000
 * events of 10,000 distinct documents (one license key, one day), each report
 * carrying a metadata dimension of 100 values (`tenant`, 100 documents each),
 * applied as the aggregator applies them (partition batches of 2,500 on 4
 * partitions, offsets fenced), into a Redis of its own. Exact billing should
 * cost memory per distinct document and dimension value, not per event: the
 * growth after every document was seen once (from 100,000 to 1,000,000
 * events) is what each further event costs.
 */
import { randomUUID } from "node:crypto";
import { createLogger } from "../../services/core/logger.js";
import { connectRedis } from "../../services/core/redis-client.js";
import { RedisUsageStore } from "../../services/telemetry/usage/redis-usage-store.js";
import type { UsageRecord } from "../../services/telemetry/usage-record.js";
import { startRedis } from "../../test/support/redis.js";
import { waitFor } from "../../test/support/wait.js";

export interface RedisFootprint {
  events: number;
  documents: number;
  /** used_memory growth over the whole run, per event. */
  bytesPerEvent: number;
  /** Values of the metadata dimension. */
  dimensionValues: number;
  /** used_memory growth per distinct document once the first 100,000 events were applied (the day and month sets, and its value's). */
  bytesPerDocument: number;
  /** used_memory growth from 100,000 to 1,000,000 events, per event: the cost of an event beyond its document and its value. */
  marginalBytesPerEvent: number;
}

const EVENTS = 1_000_000;
const DOCUMENTS = 10_000;
const DIMENSION_VALUES = 100;
const FIRST = 100_000;
const PARTITIONS = 4;
const BATCH = 2500;

export async function redisFootprint(): Promise<RedisFootprint> {
  const redis = await startRedis();
  const client = connectRedis(redis.url, createLogger("silent"));
  try {
    await waitFor(async () => client.isReady, { what: "redis" });
    const store = new RedisUsageStore(client);
    const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await client.info("memory"))![1]);
    const at = new Date().toISOString();
    const licenseKey = "lic_bench_redis_footprint";
    const offsets = new Array<number>(PARTITIONS).fill(0);
    const apply = async (from: number, to: number) => {
      for (let start = from; start < to; start += BATCH * PARTITIONS) {
        await Promise.all(
          offsets.map(async (offset, partition) => {
            const records = Array.from({ length: BATCH }, (_, i): { offset: number; record: UsageRecord } => {
              const n = start + partition * BATCH + i;
              const document = n % DOCUMENTS;
              const record = {
                eventId: randomUUID(),
                licenseKey,
                documentId: `HASH-${document.toString(16).toUpperCase().padStart(8, "0")}`,
                documentCreatedAt: null,
                openedAt: at,
                receivedAt: at,
                libraryVersion: "0.20.0",
                hostname: "app.example.test",
                metadata: { tenant: `tenant-${document % DIMENSION_VALUES}` },
              };
              return { offset: offset + i, record };
            });
            offsets[partition] += BATCH;
            await store.applyPartitionBatch({ topic: "bench.footprint", partition, firstOffset: offset, lastOffset: offset + BATCH - 1, records });
          }),
        );
      }
    };
    const empty = await usedMemory();
    await apply(0, FIRST);
    const afterFirst = await usedMemory();
    await apply(FIRST, EVENTS);
    const afterAll = await usedMemory();
    const day = at.slice(0, 10);
    const usage = await store.usage(licenseKey, day, day);
    if (usage.opens !== EVENTS || usage.documents !== DOCUMENTS) throw new Error(`counted ${usage.opens} opens, ${usage.documents} documents; expected ${EVENTS}, ${DOCUMENTS}`);
    const grouped = await store.usageBy(licenseKey, day, day, "tenant");
    const perValue = DOCUMENTS / DIMENSION_VALUES;
    if (grouped.groups.length !== DIMENSION_VALUES || grouped.groups.some((g) => g.documents !== perValue || g.opens !== EVENTS / DIMENSION_VALUES)) {
      throw new Error(`grouped by tenant: ${grouped.groups.length} values, expected ${DIMENSION_VALUES} of ${perValue} documents each`);
    }
    return {
      events: EVENTS,
      documents: DOCUMENTS,
      dimensionValues: DIMENSION_VALUES,
      bytesPerEvent: (afterAll - empty) / EVENTS,
      bytesPerDocument: (afterFirst - empty) / DOCUMENTS,
      marginalBytesPerEvent: (afterAll - afterFirst) / (EVENTS - FIRST),
    };
  } finally {
    await client.close();
    await redis.remove();
  }
}
