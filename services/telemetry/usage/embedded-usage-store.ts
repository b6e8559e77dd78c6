import { open, type RootDatabase } from "lmdb";
import { parseUsageRange, rangeUsage, usageEntries, type UsageEntry } from "./usage-range.js";
import type { UsageRecord } from "../usage-record.js";
import { EVENT_ID_MEMORY_SECONDS, type PartitionBatch, type PartitionBatchResult, type Usage, type UsageStore } from "./usage-store.js";

interface Span {
  first: string;
  last: string;
}

/*
 * Keys (license keys URI-encoded, so they hold no ':'):
 *   seen:<eventId>                        → expiry (ms): the eventId was applied by record()
 *   fence:<topic>:<partition>             → the last offset applied from that Kafka partition
 *   docs:<licenseKey>:<day|month>:<member> → 1: one distinct document that UTC day / month
 *   opens:<licenseKey>:<day|month>        → opens
 *   span:<licenseKey>                     → { first, last } openedAt
 * A bucket's members are the keys between `docs:<key>:<bucket>:` and
 * `docs:<key>:<bucket>;` (';' follows ':'); a day never falls in its month's
 * range, as '-' sorts before ':'.
 */
const seenKey = (eventId: string) => `seen:${eventId}`;
const bucketPrefix = (licenseKey: string, bucket: string) => `docs:${encodeURIComponent(licenseKey)}:${bucket}:`;
const bucketRange = (licenseKey: string, bucket: string) => {
  const start = bucketPrefix(licenseKey, bucket);
  return { start, end: `${start.slice(0, -1)};` };
};
const opensKey = (licenseKey: string, period: string) => `opens:${encodeURIComponent(licenseKey)}:${period}`;
const spanKey = (licenseKey: string) => `span:${encodeURIComponent(licenseKey)}`;
const fenceKey = (topic: string, partition: number) => `fence:${topic}:${partition}`;

const SWEEP_EVERY_MS = 3600 * 1000;

/**
 * The embedded-mode usage store: an LMDB database in the data directory, with
 * the same semantics as the Redis one. Each batch is one synchronous write
 * transaction (atomic, on disk when it returns); distinct members are keys,
 * so the count of a range is a walk over its buckets' keys into a Set.
 * record() keeps the ids of applied events (at embedded volumes, a few MB a
 * day), where the Kafka path keeps only offsets.
 */
export class EmbeddedUsageStore implements UsageStore {
  private readonly db: RootDatabase;
  private lastSweep = 0;

  constructor(path: string, private readonly now: () => number = Date.now) {
    this.db = open({ path, compression: false });
    this.sweepSeen();
  }

  async applyPartitionBatch(batch: PartitionBatch, options: { acceptGap?: boolean } = {}): Promise<PartitionBatchResult> {
    const entries = usageEntries(batch.records.map((r) => r.record));
    const key = fenceKey(batch.topic, batch.partition);
    return this.db.transactionSync(() => {
      const fence = this.db.get(key) as number | undefined;
      if (fence !== undefined && !options.acceptGap && fence < batch.firstOffset - 1) return { behind: fence };
      const fresh = fence === undefined ? entries : entries.filter((_, index) => batch.records[index].offset > fence);
      this.count(fresh);
      if (fence === undefined || batch.lastOffset > fence) this.db.putSync(key, batch.lastOffset);
      return { applied: fresh.length };
    });
  }

  async dropStaleFences(topic: string, highWatermarks: Map<number, number>): Promise<number[]> {
    return this.db.transactionSync(() =>
      [...highWatermarks].flatMap(([partition, high]) => {
        const fence = this.db.get(fenceKey(topic, partition)) as number | undefined;
        if (fence === undefined || fence < high) return [];
        this.db.removeSync(fenceKey(topic, partition));
        return [partition];
      }),
    );
  }

  async record(records: UsageRecord[]): Promise<void> {
    const entries = usageEntries(records);
    const now = this.now();
    if (now - this.lastSweep >= SWEEP_EVERY_MS) this.sweepSeen();
    this.db.transactionSync(() => {
      const fresh = entries.filter((e) => {
        const seen = this.db.get(seenKey(e.eventId)) as number | undefined;
        if (seen !== undefined && seen > now) return false;
        this.db.putSync(seenKey(e.eventId), now + EVENT_ID_MEMORY_SECONDS * 1000);
        return true;
      });
      this.count(fresh);
    });
  }

  async usage(licenseKey: string, from: string, to: string): Promise<Usage> {
    const range = parseUsageRange(from, to);
    const members = new Set<string>();
    for (const bucket of range.buckets) {
      const prefixLength = bucketPrefix(licenseKey, bucket).length;
      for (const key of this.db.getKeys(bucketRange(licenseKey, bucket))) members.add((key as string).slice(prefixLength));
    }
    const span = this.db.get(spanKey(licenseKey)) as Span | undefined;
    return rangeUsage(
      range,
      members.size,
      (period) => ({
        documents: this.db.getCount(bucketRange(licenseKey, period)),
        opens: (this.db.get(opensKey(licenseKey, period)) as number | undefined) ?? 0,
      }),
      { first: span?.first, last: span?.last },
    );
  }

  async health(): Promise<void> {
    this.db.get("health");
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** Counts the entries (inside a write transaction). */
  private count(entries: UsageEntry[]): void {
    const opens = new Map<string, number>();
    const spans = new Map<string, Span>();
    for (const e of entries) {
      for (const period of [e.day, e.month]) {
        this.db.putSync(bucketPrefix(e.licenseKey, period) + e.member, 1);
        const key = opensKey(e.licenseKey, period);
        opens.set(key, (opens.get(key) ?? (this.db.get(key) as number | undefined) ?? 0) + 1);
      }
      const span = spans.get(e.licenseKey) ?? (this.db.get(spanKey(e.licenseKey)) as Span | undefined);
      spans.set(e.licenseKey, {
        first: span && span.first < e.openedAt ? span.first : e.openedAt,
        last: span && span.last > e.openedAt ? span.last : e.openedAt,
      });
    }
    for (const [key, count] of opens) this.db.putSync(key, count);
    for (const [licenseKey, span] of spans) this.db.putSync(spanKey(licenseKey), span);
  }

  /** Forgets eventIds applied by record() more than EVENT_ID_MEMORY_SECONDS ago (Redis expires them by TTL); at start and at most hourly. */
  private sweepSeen(): void {
    const now = this.now();
    this.lastSweep = now;
    this.db.transactionSync(() => {
      for (const { key, value } of this.db.getRange({ start: "seen:", end: "seen;" })) {
        if ((value as number) <= now) this.db.removeSync(key);
      }
    });
  }
}
