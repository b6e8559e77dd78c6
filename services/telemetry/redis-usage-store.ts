import { randomUUID } from "node:crypto";
import { guardRedis, type RedisClient } from "../core/redis-client.js";
import { parseUsageRange, rangeUsage, usageEntries, type UsageEntry } from "./usage-range.js";
import type { UsageRecord } from "./usage-record.js";
import type { Usage, UsageStore } from "./usage-store.js";

/*
 * Keys (exact counts: sets, never HyperLogLog):
 *   ds:usage:seen:<minute>                SET of the applied eventIds received in that UTC minute
 *                                         (YYYY-MM-DDTHH:MM), kept for the dedupe window after its last write;
 *                                         a minute, so expiring sets stay small (README: lazyfree-lazy-expire)
 *   ds:usage:key:<licenseKey>:docs:<day>   SET of document members that UTC day (YYYY-MM-DD)
 *   ds:usage:key:<licenseKey>:docs:<month> SET of document members that month (YYYY-MM)
 *   ds:usage:key:<licenseKey>:opens        HASH <day> → opens, <month> → opens
 *   ds:usage:key:<licenseKey>:span         HASH first, last → openedAt (ISO 8601 UTC, compared as text)
 * The day and month suffixes have fixed shapes, so a license key containing
 * ':' cannot make two keys meet.
 *
 * The scripts build these keys from ARGV instead of declaring them in KEYS:
 * right for one Redis (with or without replicas), not for Redis Cluster,
 * where the keys of one script would span hash slots.
 */
const KEY_PREFIX = "ds:usage:key:";

// Per group of records (one license key, one UTC day, one minute received;
// built in JS): remember each eventId in the set of its minute and count the
// new ones as opens of the day and month, so a redelivered or replayed event
// (received in the same minute as its original, by definition) never counts
// twice. The group's distinct members go into the day and month sets, and
// its earliest and latest openedAt into the span, whether or not its events
// are new: a set and a min/max absorb what was applied before, so one SADD
// per set and one span update per group do, instead of per record. A group
// with no new event changes nothing: everything in it was applied before.
// ARGV: ttl, then per group: license key, day, month, minute received, number
// of events, number of members, first openedAt, last openedAt, the eventIds
// (as seenMember), the members.
const RECORD = `
local ttl = ARGV[1]
local applied = 0
local i = 2
while i <= #ARGV do
  local base = '${KEY_PREFIX}' .. ARGV[i]
  local day, month, seen = ARGV[i + 1], ARGV[i + 2], 'ds:usage:seen:' .. ARGV[i + 3]
  local events, members, first, last = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), ARGV[i + 6], ARGV[i + 7]
  i = i + 8
  local new = 0
  for j = i, i + events - 1 do
    new = new + redis.call('SADD', seen, ARGV[j])
  end
  redis.call('EXPIRE', seen, ttl)
  i = i + events
  if new > 0 then
    redis.call('SADD', base .. ':docs:' .. day, unpack(ARGV, i, i + members - 1))
    redis.call('SADD', base .. ':docs:' .. month, unpack(ARGV, i, i + members - 1))
    redis.call('HINCRBY', base .. ':opens', day, new)
    redis.call('HINCRBY', base .. ':opens', month, new)
    local stored = redis.call('HMGET', base .. ':span', 'first', 'last')
    if not stored[1] or first < stored[1] then redis.call('HSET', base .. ':span', 'first', first) end
    if not stored[2] or last > stored[2] then redis.call('HSET', base .. ':span', 'last', last) end
    applied = applied + new
  end
  i = i + members
end
return applied`;

// The exact distinct count of the range: SUNIONSTORE of its day/month sets
// into a temporary key (its reply is the union's cardinality), deleted at
// once; the script is atomic, so nobody sees the temporary key. Then the
// cardinality of every day and month, their opens, and the first/last seen.
// ARGV: key prefix, temporary key, number of union buckets, the buckets, then
// the days and months to report.
const USAGE = `
local base, tmp, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
local union = {}
for i = 1, n do union[i] = base .. ':docs:' .. ARGV[3 + i] end
local reply = { redis.call('SUNIONSTORE', tmp, unpack(union)) }
redis.call('DEL', tmp)
local fields = {}
for i = 4 + n, #ARGV do
  fields[#fields + 1] = ARGV[i]
  reply[#reply + 1] = redis.call('SCARD', base .. ':docs:' .. ARGV[i])
end
local opens = redis.call('HMGET', base .. ':opens', unpack(fields))
for i = 1, #opens do reply[#reply + 1] = tonumber(opens[i]) or 0 end
local span = redis.call('HMGET', base .. ':span', 'first', 'last')
reply[#reply + 1] = span[1]
reply[#reply + 1] = span[2]
return reply`;

/** Records per script run: each run is atomic; this bounds how long one blocks Redis. */
const RECORDS_PER_SCRIPT = 1000;

/** Usage counts in Redis, shared by every aggregator replica. */
export class RedisUsageStore implements UsageStore {
  /** `dedupeWindowSeconds`: how long an applied eventId is remembered. */
  constructor(
    private readonly redis: RedisClient,
    private readonly dedupeWindowSeconds: number,
  ) {}

  /**
   * Applies the records in scripts of up to 1,000 records, each atomic, sent
   * together (one round trip). If one fails, retrying the whole batch is safe:
   * the records already applied are skipped by their eventId.
   */
  async record(records: UsageRecord[]): Promise<void> {
    const entries = usageEntries(records);
    const scripts: string[][] = [];
    for (let start = 0; start < entries.length; start += RECORDS_PER_SCRIPT) {
      const end = start + RECORDS_PER_SCRIPT;
      scripts.push(recordArguments(records.slice(start, end), entries.slice(start, end), this.dedupeWindowSeconds));
    }
    await this.guard(() => Promise.all(scripts.map((args) => this.redis.eval(RECORD, { arguments: args }))));
  }

  async usage(licenseKey: string, from: string, to: string): Promise<Usage> {
    const range = parseUsageRange(from, to);
    const periods = [...range.days, ...range.months];
    const reply = await this.guard(
      async () =>
        (await this.redis.eval(USAGE, {
          arguments: [`${KEY_PREFIX}${licenseKey}`, `ds:usage:tmp:${randomUUID()}`, String(range.buckets.length), ...range.buckets, ...periods],
        })) as (number | string | null)[],
    );
    // reply: the range's distinct count, documents of each period, opens of each period, first, last
    const [documents, ...counts] = reply;
    const [first, last] = counts.slice(2 * periods.length) as (string | null)[];
    return rangeUsage(
      range,
      Number(documents),
      (period) => {
        const index = periods.indexOf(period);
        return { documents: Number(counts[index]), opens: Number(counts[periods.length + index]) };
      },
      { first, last },
    );
  }

  health(): Promise<void> {
    return this.guard(async () => {
      await this.redis.ping();
    });
  }

  async close(): Promise<void> {
    if (this.redis.isOpen) await this.redis.close();
  }

  private guard<T>(operation: () => Promise<T>): Promise<T> {
    return guardRedis("usage store (Redis)", operation);
  }
}

interface RecordGroup {
  licenseKey: string;
  day: string;
  month: string;
  minute: string;
  eventIds: string[];
  members: Set<string>;
  first: string;
  last: string;
}

/** The RECORD script's arguments: the entries grouped by license key, day and minute received. */
function recordArguments(records: UsageRecord[], entries: UsageEntry[], ttlSeconds: number): string[] {
  const groups = new Map<string, RecordGroup>();
  entries.forEach((e, index) => {
    const minute = minuteReceived(records[index]);
    const key = `${minute}|${e.day}|${e.licenseKey}`;
    const group = groups.get(key);
    if (!group) {
      const { licenseKey, day, month, openedAt } = e;
      groups.set(key, { licenseKey, day, month, minute, eventIds: [seenMember(e.eventId)], members: new Set([e.member]), first: openedAt, last: openedAt });
      return;
    }
    group.eventIds.push(seenMember(e.eventId));
    group.members.add(e.member);
    if (e.openedAt < group.first) group.first = e.openedAt;
    if (e.openedAt > group.last) group.last = e.openedAt;
  });
  const args = [String(ttlSeconds)];
  for (const g of groups.values()) {
    args.push(g.licenseKey, g.day, g.month, g.minute, String(g.eventIds.length), String(g.members.size), g.first, g.last, ...g.eventIds, ...g.members);
  }
  return args;
}

/**
 * The minute an event was received (YYYY-MM-DDTHH:MM, from the ISO 8601 UTC
 * receivedAt set once on acceptance): an event and its replayed copies carry
 * the same text, so it needs no parsing. A record without one (not written by
 * us) shares one set with the others like it.
 */
function minuteReceived(record: UsageRecord): string {
  return typeof record.receivedAt === "string" ? record.receivedAt.slice(0, 16) : "";
}

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

/** An eventId as a member of its minute's set: a UUID as its 16 bytes in base64url (22 characters), anything else as it is after "~" (not in that alphabet). */
function seenMember(eventId: string): string {
  return UUID.test(eventId) ? Buffer.from(eventId.replaceAll("-", ""), "hex").toString("base64url") : `~${eventId}`;
}
