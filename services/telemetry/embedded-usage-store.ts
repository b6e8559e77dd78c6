import { open, type RootDatabase } from "lmdb";
import { parseUsageRange, rangeUsage, usageEntries } from "./usage-range.js";
import type { UsageRecord } from "./usage-record.js";
import type { Usage, UsageStore } from "./usage-store.js";

interface Span {
  first: string;
  last: string;
}

/*
 * Keys (license keys URI-encoded, so they hold no ':'):
 *   seen:<eventId>                        → expiry (ms): the eventId was applied
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

const SWEEP_EVERY_MS = 3600 * 1000;

/**
 * The embedded-mode usage store: an LMDB database in the data directory, with
 * the same semantics as the Redis one. Each batch is one synchronous write
 * transaction (atomic, on disk when record() returns); distinct members are
 * keys, so the count of a range is a walk over its buckets' keys into a Set.
 */
export class EmbeddedUsageStore implements UsageStore {
  private readonly db: RootDatabase;
  private lastSweep = 0;

  private readonly dedupeWindowMs: number;

  /** `dedupeWindowSeconds`: how long an applied eventId is remembered. */
  constructor(path: string, dedupeWindowSeconds: number, private readonly now: () => number = Date.now) {
    this.dedupeWindowMs = dedupeWindowSeconds * 1000;
    this.db = open({ path, compression: false });
    this.sweepSeen();
  }

  async record(records: UsageRecord[]): Promise<void> {
    const entries = usageEntries(records);
    const now = this.now();
    if (now - this.lastSweep >= SWEEP_EVERY_MS) this.sweepSeen();
    this.db.transactionSync(() => {
      const opens = new Map<string, number>();
      const spans = new Map<string, Span>();
      for (const e of entries) {
        const seen = this.db.get(seenKey(e.eventId)) as number | undefined;
        if (seen !== undefined && seen > now) continue;
        this.db.putSync(seenKey(e.eventId), now + this.dedupeWindowMs);
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

  /** Forgets eventIds past the dedupe window (Redis expires them by TTL); at start and at most hourly. */
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
