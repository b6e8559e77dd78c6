import { open, type RootDatabase } from "lmdb";
import { dimensionId, MAX_DIMENSION_KEYS, MAX_DIMENSION_VALUES, OTHER_VALUES_ID } from "./dimensions.js";
import { groupedUsage, MAX_GROUPED_RANGE_DAYS, parseUsageRange, rangeUsage, usageEntries, type UsageEntry, type UsageRange } from "./usage-range.js";
import type { UsageRecord } from "../usage-record.js";
import { EVENT_ID_MEMORY_SECONDS, type GroupedUsage, type PartitionBatch, type PartitionBatchResult, type Usage, type UsageStore } from "./usage-store.js";

interface Span {
  first: string;
  last: string;
}

/*
 * Keys (license keys URI-encoded, so they hold no ':'; <period> a UTC day or month):
 *   seen:<eventId>                        → expiry (ms): the eventId was applied by record()
 *   fence:<topic>:<partition>             → the last offset applied from that Kafka partition
 *   docs:<licenseKey>:<period>:<member>   → 1: one distinct document that period
 *   idless:<licenseKey>:<period>:<member> → 1: one whose documentId is not a content id
 *   opens:<licenseKey>:<period>           → opens
 *   span:<licenseKey>                     → { first, last } openedAt
 *   dims:<licenseKey>:<month>:<keyId>     → the metadata key counted as a dimension that month
 *   dimvalues:<licenseKey>:<month>:<keyId>:<valueId>             → the value's text
 *   dimdocs:<licenseKey>:<period>:<keyId>:<valueId>:<member>     → 1
 *   dimopens:<licenseKey>:<period>:<keyId>:<valueId>             → opens
 * The keys of a set are those between `<prefix>:` and `<prefix>;` (';' follows
 * ':'); a day never falls in its month's range, as '-' sorts before ':'.
 */
const seenKey = (eventId: string) => `seen:${eventId}`;
const setRange = (prefix: string) => ({ start: `${prefix}:`, end: `${prefix};` });
const docsSet = (licenseKey: string, bucket: string) => `docs:${encodeURIComponent(licenseKey)}:${bucket}`;
const idlessSet = (licenseKey: string, bucket: string) => `idless:${encodeURIComponent(licenseKey)}:${bucket}`;
const dimensionKeys = (licenseKey: string, month: string) => `dims:${encodeURIComponent(licenseKey)}:${month}`;
const dimensionValues = (licenseKey: string, month: string, keyId: string) => `dimvalues:${encodeURIComponent(licenseKey)}:${month}:${keyId}`;
const dimensionDocs = (licenseKey: string, period: string, keyId: string, valueId: string) => `dimdocs:${encodeURIComponent(licenseKey)}:${period}:${keyId}:${valueId}`;
const dimensionOpens = (licenseKey: string, period: string, keyId: string, valueId: string) => `dimopens:${encodeURIComponent(licenseKey)}:${period}:${keyId}:${valueId}`;
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
    const span = this.db.get(spanKey(licenseKey)) as Span | undefined;
    return rangeUsage(
      range,
      {
        documents: this.distinct(range, (bucket) => docsSet(licenseKey, bucket)),
        documentsWithoutContentId: this.distinct(range, (bucket) => idlessSet(licenseKey, bucket)),
      },
      (period) => ({
        documents: this.db.getCount(setRange(docsSet(licenseKey, period))),
        documentsWithoutContentId: this.db.getCount(setRange(idlessSet(licenseKey, period))),
        opens: (this.db.get(opensKey(licenseKey, period)) as number | undefined) ?? 0,
      }),
      { first: span?.first, last: span?.last },
    );
  }

  async usageBy(licenseKey: string, from: string, to: string, key: string): Promise<GroupedUsage> {
    const range = parseUsageRange(from, to, MAX_GROUPED_RANGE_DAYS);
    const keyId = dimensionId(key);
    const values = new Map<string, string>();
    for (const month of range.months) {
      const prefix = dimensionValues(licenseKey, month, keyId);
      for (const { key: stored, value } of this.db.getRange(setRange(prefix))) {
        const valueId = (stored as string).slice(prefix.length + 1);
        if (!values.has(valueId)) values.set(valueId, value as string);
      }
    }
    values.set(OTHER_VALUES_ID, "");
    const opensOf = (period: string, valueId: string) => (this.db.get(dimensionOpens(licenseKey, period, keyId, valueId)) as number | undefined) ?? 0;
    const counts = [...values].map(([valueId, value]) => ({
      valueId,
      value,
      documents: this.distinct(range, (bucket) => dimensionDocs(licenseKey, bucket, keyId, valueId)),
      opens: range.buckets.reduce((sum, bucket) => sum + opensOf(bucket, valueId), 0),
      months: range.months.map((month) => ({ documents: this.db.getCount(setRange(dimensionDocs(licenseKey, month, keyId, valueId))), opens: opensOf(month, valueId) })),
    }));
    return groupedUsage(key, range, counts);
  }

  async health(): Promise<void> {
    this.db.get("health");
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** The exact number of distinct members in the sets of the range's buckets. */
  private distinct(range: UsageRange, setOf: (bucket: string) => string): number {
    const members = new Set<string>();
    for (const bucket of range.buckets) {
      const prefixLength = setOf(bucket).length + 1;
      for (const key of this.db.getKeys(setRange(setOf(bucket)))) members.add((key as string).slice(prefixLength));
    }
    return members.size;
  }

  /** Counts the entries (inside a write transaction). */
  private count(entries: UsageEntry[]): void {
    const opens = new Map<string, number>();
    const spans = new Map<string, Span>();
    const add = (key: string) => opens.set(key, (opens.get(key) ?? (this.db.get(key) as number | undefined) ?? 0) + 1);
    for (const e of entries) {
      for (const period of [e.day, e.month]) {
        this.db.putSync(`${docsSet(e.licenseKey, period)}:${e.member}`, 1);
        if (!e.contentId) this.db.putSync(`${idlessSet(e.licenseKey, period)}:${e.member}`, 1);
        add(opensKey(e.licenseKey, period));
      }
      for (const { keyId, key, valueId, value } of e.dimensions) {
        const counted = this.countedValue(e.licenseKey, e.month, keyId, key, valueId, value);
        if (counted === undefined) continue;
        for (const period of [e.day, e.month]) {
          this.db.putSync(`${dimensionDocs(e.licenseKey, period, keyId, counted)}:${e.member}`, 1);
          add(dimensionOpens(e.licenseKey, period, keyId, counted));
        }
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

  /**
   * The value id a dimension counts under that month (registering the key and
   * the value while the month has room: MAX_DIMENSION_KEYS keys,
   * MAX_DIMENSION_VALUES values of each, then OTHER_VALUES_ID); undefined when
   * the key is not counted that month.
   */
  private countedValue(licenseKey: string, month: string, keyId: string, key: string, valueId: string, value: string): string | undefined {
    const keys = dimensionKeys(licenseKey, month);
    if (this.db.get(`${keys}:${keyId}`) === undefined) {
      if (this.db.getCount(setRange(keys)) >= MAX_DIMENSION_KEYS) return undefined;
      this.db.putSync(`${keys}:${keyId}`, key);
    }
    const values = dimensionValues(licenseKey, month, keyId);
    if (this.db.get(`${values}:${valueId}`) !== undefined) return valueId;
    if (this.db.getCount(setRange(values)) >= MAX_DIMENSION_VALUES) return OTHER_VALUES_ID;
    this.db.putSync(`${values}:${valueId}`, value);
    return valueId;
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
