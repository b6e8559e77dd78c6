import { randomUUID } from "node:crypto";
import { guardRedis, type RedisClient } from "../core/redis-client.js";
import { parseUsageRange, rangeUsage, SEEN_EVENT_TTL_SECONDS, usageEntries } from "./usage-range.js";
import type { UsageRecord } from "./usage-record.js";
import type { Usage, UsageStore } from "./usage-store.js";

/*
 * Keys (exact counts: sets, never HyperLogLog):
 *   ds:usage:seen:<eventId>               "1", EX 7 days: the eventId was applied
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

// Per record: remember the eventId (SET NX), and only when it is new count it,
// so a redelivered or replayed event never counts twice. The new records are
// gathered per set and per license key first, so each set, opens hash and span
// is written once per batch instead of once per record.
// ARGV: ttl, then 6 values per record.
const RECORD = `
local ttl = ARGV[1]
local members, opens, spans = {}, {}, {}
local applied = 0
for i = 2, #ARGV, 6 do
  if redis.call('SET', 'ds:usage:seen:' .. ARGV[i], '1', 'NX', 'EX', ttl) then
    local base = '${KEY_PREFIX}' .. ARGV[i + 1]
    local day, month, member, openedAt = ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
    for _, period in ipairs({ day, month }) do
      local set = base .. ':docs:' .. period
      members[set] = members[set] or {}
      table.insert(members[set], member)
      opens[base] = opens[base] or {}
      opens[base][period] = (opens[base][period] or 0) + 1
    end
    local span = spans[base]
    if not span then spans[base] = { openedAt, openedAt }
    else
      if openedAt < span[1] then span[1] = openedAt end
      if openedAt > span[2] then span[2] = openedAt end
    end
    applied = applied + 1
  end
end
for set, list in pairs(members) do redis.call('SADD', set, unpack(list)) end
for base, periods in pairs(opens) do
  for period, count in pairs(periods) do redis.call('HINCRBY', base .. ':opens', period, count) end
end
for base, span in pairs(spans) do
  local stored = redis.call('HMGET', base .. ':span', 'first', 'last')
  if not stored[1] or span[1] < stored[1] then redis.call('HSET', base .. ':span', 'first', span[1]) end
  if not stored[2] or span[2] > stored[2] then redis.call('HSET', base .. ':span', 'last', span[2]) end
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
  constructor(private readonly redis: RedisClient) {}

  /**
   * Applies the records in scripts of up to 1,000 records, each atomic, sent
   * together (one round trip). If one fails, retrying the whole batch is safe:
   * the records already applied are skipped by their eventId.
   */
  async record(records: UsageRecord[]): Promise<void> {
    const entries = usageEntries(records);
    const scripts: string[][] = [];
    for (let start = 0; start < entries.length; start += RECORDS_PER_SCRIPT) {
      const args = [String(SEEN_EVENT_TTL_SECONDS)];
      for (const e of entries.slice(start, start + RECORDS_PER_SCRIPT)) {
        args.push(e.eventId, e.licenseKey, e.day, e.month, e.member, e.openedAt);
      }
      scripts.push(args);
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
