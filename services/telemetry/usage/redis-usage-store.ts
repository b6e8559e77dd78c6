import { randomUUID } from "node:crypto";
import { guardRedis, type RedisClient } from "../../core/redis-client.js";
import { dimensionId, MAX_DIMENSION_KEYS, MAX_DIMENSION_VALUES, OTHER_VALUES_ID, type Dimension } from "./dimensions.js";
import { groupedUsage, MAX_GROUPED_RANGE_DAYS, parseUsageRange, rangeUsage, usageEntries, type UsageEntry, type ValueCounts } from "./usage-range.js";
import type { UsageRecord } from "../usage-record.js";
import { EVENT_ID_MEMORY_SECONDS, type GroupedUsage, type PartitionBatch, type PartitionBatchResult, type Usage, type UsageStore } from "./usage-store.js";

/*
 * Keys (exact counts: sets, never HyperLogLog), <period> a UTC day (YYYY-MM-DD) or month (YYYY-MM):
 *   ds:usage:key:<licenseKey>:docs:<period>      SET of document members that period
 *   ds:usage:key:<licenseKey>:idless:<period>    SET of those whose documentId is not a content id
 *   ds:usage:key:<licenseKey>:opens              HASH <period> → opens
 *   ds:usage:key:<licenseKey>:span               HASH first, last → openedAt (ISO 8601 UTC, compared as text)
 *   ds:usage:key:<licenseKey>:dims:<month>       HASH <keyId> → metadata key counted as a dimension that month
 *   ds:usage:key:<licenseKey>:dimvalues:<month>:<keyId>        HASH <valueId> → value text
 *   ds:usage:key:<licenseKey>:dimdocs:<period>:<keyId>:<valueId> SET of document members with that value
 *   ds:usage:key:<licenseKey>:dimopens:<period>:<keyId>        HASH <valueId> → opens
 *   ds:usage:offsets:<topic>               HASH <partition> → last offset applied (the fence)
 *   ds:usage:seen:<minute>                 SET of eventIds applied by record() (no Kafka) received that
 *                                          UTC minute, kept EVENT_ID_MEMORY_SECONDS after its last write
 * Ids are 16 characters of base64url (dimensions.ts) and periods have fixed
 * shapes, so a license key containing ':' cannot make two keys meet.
 *
 * The scripts build these keys from ARGV instead of declaring them in KEYS:
 * right for one Redis (with or without replicas), not for Redis Cluster,
 * where the keys of one script would span hash slots.
 */
const KEY_PREFIX = "ds:usage:key:";
const fencesKey = (topic: string) => `ds:usage:offsets:${topic}`;

// Counts one group (one license key, one UTC day, one set of dimensions) in
// its day and month: its distinct members into the sets (those without a
// content id into theirs too), `opens` into the open counts, its earliest and
// latest openedAt into the span, and the same members and opens into the sets
// and counts of each of its dimensions' values. A month counts at most
// ${MAX_DIMENSION_KEYS} keys and ${MAX_DIMENSION_VALUES} values of each; a later value counts as
// '${OTHER_VALUES_ID}'. Sets and min/max absorb what was applied before, so one SADD per set
// and one span update per group do.
// In scope: base, day, month, opens, members, first, last, idless, dims, and
// i, the index in ARGV of the group's members, then its members without a
// content id, then its dimensions (key id, key, value id, value).
const COUNT_GROUP = `
    redis.call('SADD', base .. ':docs:' .. day, unpack(ARGV, i, i + members - 1))
    redis.call('SADD', base .. ':docs:' .. month, unpack(ARGV, i, i + members - 1))
    if idless > 0 then
      redis.call('SADD', base .. ':idless:' .. day, unpack(ARGV, i + members, i + members + idless - 1))
      redis.call('SADD', base .. ':idless:' .. month, unpack(ARGV, i + members, i + members + idless - 1))
    end
    redis.call('HINCRBY', base .. ':opens', day, opens)
    redis.call('HINCRBY', base .. ':opens', month, opens)
    local span = redis.call('HMGET', base .. ':span', 'first', 'last')
    if not span[1] or first < span[1] then redis.call('HSET', base .. ':span', 'first', first) end
    if not span[2] or last > span[2] then redis.call('HSET', base .. ':span', 'last', last) end
    local keys = base .. ':dims:' .. month
    for k = i + members + idless, i + members + idless + 4 * dims - 1, 4 do
      local keyId, valueId = ARGV[k], ARGV[k + 2]
      if redis.call('HSETNX', keys, keyId, ARGV[k + 1]) == 1 and redis.call('HLEN', keys) > ${MAX_DIMENSION_KEYS} then
        redis.call('HDEL', keys, keyId)
      elseif redis.call('HEXISTS', keys, keyId) == 1 then
        local values = base .. ':dimvalues:' .. month .. ':' .. keyId
        if redis.call('HEXISTS', values, valueId) == 0 then
          if redis.call('HLEN', values) < ${MAX_DIMENSION_VALUES} then redis.call('HSET', values, valueId, ARGV[k + 3]) else valueId = '${OTHER_VALUES_ID}' end
        end
        for _, period in ipairs({ day, month }) do
          redis.call('SADD', base .. ':dimdocs:' .. period .. ':' .. keyId .. ':' .. valueId, unpack(ARGV, i, i + members - 1))
          redis.call('HINCRBY', base .. ':dimopens:' .. period .. ':' .. keyId, valueId, opens)
        end
      end
    end`;

/** Per group after its header: its members, those without a content id, then 4 arguments per dimension. */
const GROUP_LENGTH = `members + idless + 4 * dims`;

// One chunk of a partition batch, offsets first to last, fenced by the
// partition's last applied offset, stored by the same atomic script:
//   every offset at or below the fence  → {0, fence}: applied before, nothing done
//   the chunk straddles the fence       → {1, fence}: nothing done; the caller sends the part after it
//   `after` given and not yet applied   → {2, fence}: an earlier chunk of the batch failed
//   the fence before first - 1 (only when the gap is not accepted) → {3, fence}: the store is behind
//   otherwise the chunk is counted      → {4, opens}
// A missing fence reads as -1 with no gap check (the partition's first batch).
// ARGV: fences key, partition, first, last, after ('' for none), accept gap ('1'/'0'),
// then per group: license key, day, month, events, members, first openedAt,
// last openedAt, members without a content id, dimensions, then what
// COUNT_GROUP reads from i.
const APPLY = `
local fences, partition = ARGV[1], ARGV[2]
local chunkFirst, chunkLast = tonumber(ARGV[3]), tonumber(ARGV[4])
local fence = tonumber(redis.call('HGET', fences, partition) or '')
if fence and chunkLast <= fence then return {0, fence} end
if fence and chunkFirst <= fence then return {1, fence} end
if ARGV[5] ~= '' and (not fence or fence < tonumber(ARGV[5])) then return {2, fence or -1} end
if ARGV[6] ~= '1' and fence and fence < chunkFirst - 1 then return {3, fence} end
local counted = 0
local i = 7
while i <= #ARGV do
  local base = '${KEY_PREFIX}' .. ARGV[i]
  local day, month = ARGV[i + 1], ARGV[i + 2]
  local opens, members, first, last = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]), ARGV[i + 5], ARGV[i + 6]
  local idless, dims = tonumber(ARGV[i + 7]), tonumber(ARGV[i + 8])
  i = i + 9
${COUNT_GROUP}
  counted = counted + opens
  i = i + ${GROUP_LENGTH}
end
redis.call('HSET', fences, partition, chunkLast)
return {4, counted}`;

// Records from record() (no Kafka), per group of one license key, one UTC day
// and one minute received: remember each eventId in the set of its minute and
// count the new ones as opens, so a replayed event (received in the same
// minute as its original, by definition) never counts twice. A group with no
// new event changes nothing: everything in it was applied before.
// ARGV: ttl, then per group: license key, day, month, minute received, number
// of events, number of members, first openedAt, last openedAt, members
// without a content id, dimensions, the eventIds (as seenMember), then what
// COUNT_GROUP reads from i.
const RECORD = `
local ttl = ARGV[1]
local i = 2
while i <= #ARGV do
  local base = '${KEY_PREFIX}' .. ARGV[i]
  local day, month, seen = ARGV[i + 1], ARGV[i + 2], 'ds:usage:seen:' .. ARGV[i + 3]
  local events, members, first, last = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), ARGV[i + 6], ARGV[i + 7]
  local idless, dims = tonumber(ARGV[i + 8]), tonumber(ARGV[i + 9])
  i = i + 10
  local opens = 0
  for j = i, i + events - 1 do
    opens = opens + redis.call('SADD', seen, ARGV[j])
  end
  redis.call('EXPIRE', seen, ttl)
  i = i + events
  if opens > 0 then
${COUNT_GROUP}
  end
  i = i + ${GROUP_LENGTH}
end`;

// Usage per value of one dimension over a range: the values its months
// registered (and '${OTHER_VALUES_ID}'), each value's exact distinct documents over the
// range (SUNIONSTORE of its buckets' sets into a temporary key, deleted at
// once), its opens over the range (the buckets' counts), and the documents and
// opens of each month. Values with nothing in the range are left out.
// ARGV: key prefix, temporary key, key id, number of months, the months, then the buckets.
const GROUP_USAGE = `
local base, tmp, keyId, nMonths = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local months, buckets = {}, {}
for i = 1, nMonths do months[i] = ARGV[4 + i] end
for i = 5 + nMonths, #ARGV do buckets[#buckets + 1] = ARGV[i] end
local values, order = { ['${OTHER_VALUES_ID}'] = '' }, {}
for _, month in ipairs(months) do
  local registered = redis.call('HGETALL', base .. ':dimvalues:' .. month .. ':' .. keyId)
  for i = 1, #registered, 2 do
    if not values[registered[i]] then
      values[registered[i]] = registered[i + 1]
      order[#order + 1] = registered[i]
    end
  end
end
order[#order + 1] = '${OTHER_VALUES_ID}'
local reply = {}
for _, valueId in ipairs(order) do
  local sets, opens = {}, 0
  for k, bucket in ipairs(buckets) do
    sets[k] = base .. ':dimdocs:' .. bucket .. ':' .. keyId .. ':' .. valueId
    opens = opens + (tonumber(redis.call('HGET', base .. ':dimopens:' .. bucket .. ':' .. keyId, valueId)) or 0)
  end
  local documents = redis.call('SUNIONSTORE', tmp, unpack(sets))
  redis.call('DEL', tmp)
  if documents > 0 or opens > 0 then
    reply[#reply + 1] = valueId
    reply[#reply + 1] = values[valueId]
    reply[#reply + 1] = documents
    reply[#reply + 1] = opens
    for _, month in ipairs(months) do
      reply[#reply + 1] = redis.call('SCARD', base .. ':dimdocs:' .. month .. ':' .. keyId .. ':' .. valueId)
      reply[#reply + 1] = tonumber(redis.call('HGET', base .. ':dimopens:' .. month .. ':' .. keyId, valueId)) or 0
    end
  end
end
return reply`;

// Drops the fences at or beyond their partition's high watermark.
// ARGV: fences key, then pairs of partition, high watermark. Returns the partitions dropped.
const DROP_STALE_FENCES = `
local dropped = {}
for i = 2, #ARGV, 2 do
  local fence = tonumber(redis.call('HGET', ARGV[1], ARGV[i]) or '')
  if fence and fence >= tonumber(ARGV[i + 1]) then
    redis.call('HDEL', ARGV[1], ARGV[i])
    dropped[#dropped + 1] = tonumber(ARGV[i])
  end
end
return dropped`;

// The exact distinct count of the range: SUNIONSTORE of its day/month sets
// into a temporary key (its reply is the union's cardinality), deleted at
// once; the script is atomic, so nobody sees the temporary key. The same for
// the documents without a content id. Then the cardinalities of every day and
// month, their opens, and the first/last seen.
// ARGV: key prefix, temporary key, number of union buckets, the buckets, then
// the days and months to report.
const USAGE = `
local base, tmp, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
local reply = {}
for _, set in ipairs({ ':docs:', ':idless:' }) do
  local union = {}
  for i = 1, n do union[i] = base .. set .. ARGV[3 + i] end
  reply[#reply + 1] = redis.call('SUNIONSTORE', tmp, unpack(union))
  redis.call('DEL', tmp)
end
local fields = {}
for i = 4 + n, #ARGV do fields[#fields + 1] = ARGV[i] end
for _, set in ipairs({ ':docs:', ':idless:' }) do
  for _, field in ipairs(fields) do reply[#reply + 1] = redis.call('SCARD', base .. set .. field) end
end
local opens = redis.call('HMGET', base .. ':opens', unpack(fields))
for i = 1, #opens do reply[#reply + 1] = tonumber(opens[i]) or 0 end
local span = redis.call('HMGET', base .. ':span', 'first', 'last')
reply[#reply + 1] = span[1]
reply[#reply + 1] = span[2]
return reply`;

/** Records per script run: each run is atomic; this bounds how long one blocks Redis. */
const RECORDS_PER_SCRIPT = 1000;

const APPLIED_BEFORE = 0;
const STRADDLES = 1;
const OUT_OF_ORDER = 2;
const BEHIND = 3;
const COUNTED = 4;

/** One script's part of a partition batch: offsets `first` to `last`. */
interface Chunk {
  first: number;
  last: number;
  records: PartitionBatch["records"];
}

/** Usage counts in Redis, shared by every aggregator replica. */
export class RedisUsageStore implements UsageStore {
  constructor(private readonly redis: RedisClient) {}

  /**
   * Applies the batch in scripts of up to 1,000 records, each atomic, sent
   * together (one round trip). A script applies only after the one before it
   * (`after`), so a failure leaves the fence at the last script applied, and
   * retrying the whole batch applies the rest.
   */
  async applyPartitionBatch(batch: PartitionBatch, options: { acceptGap?: boolean } = {}): Promise<PartitionBatchResult> {
    const chunks = chunksOf(batch);
    const replies = await this.guard(() =>
      Promise.all(chunks.map((chunk, index) => this.applyChunk(batch, chunk, index === 0 ? "" : String(chunks[index - 1].last), options.acceptGap || index > 0))),
    );
    let applied = 0;
    let resent = false;
    for (const [index, reply] of replies.entries()) {
      let [outcome, value] = reply;
      // a chunk after one that was resent failed its `after` check: send it again, now in order
      if (resent && outcome === OUT_OF_ORDER) [outcome, value] = await this.guard(() => this.applyChunk(batch, chunks[index], String(chunks[index - 1].last), true));
      if (outcome === BEHIND) return { behind: value };
      if (outcome === OUT_OF_ORDER) throw new Error(`usage batch of ${batch.topic}[${batch.partition}] at ${chunks[index].first}: an earlier part was not applied`);
      if (outcome === STRADDLES) {
        // another consumer applied part of it (a rebalance): count the part after the fence
        const rest = { first: value + 1, last: chunks[index].last, records: chunks[index].records.filter((r) => r.offset > value) };
        [outcome, value] = await this.guard(() => this.applyChunk(batch, rest, String(value), true));
        if (outcome !== COUNTED && outcome !== APPLIED_BEFORE) throw new Error(`usage batch of ${batch.topic}[${batch.partition}] at ${rest.first}: the fence moved while it was applied`);
        resent = true;
      }
      if (outcome === COUNTED) applied += value;
    }
    return { applied };
  }

  async dropStaleFences(topic: string, highWatermarks: Map<number, number>): Promise<number[]> {
    const pairs = [...highWatermarks].flatMap(([partition, high]) => [String(partition), String(high)]);
    if (pairs.length === 0) return [];
    return this.guard(async () => (await this.redis.eval(DROP_STALE_FENCES, { arguments: [fencesKey(topic), ...pairs] })) as number[]);
  }

  async record(records: UsageRecord[]): Promise<void> {
    const entries = usageEntries(records);
    const scripts: string[][] = [];
    for (let start = 0; start < entries.length; start += RECORDS_PER_SCRIPT) {
      const end = start + RECORDS_PER_SCRIPT;
      scripts.push(recordArguments(records.slice(start, end), entries.slice(start, end)));
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
    // reply: the range's distinct documents and those without a content id; then per period documents, those without, opens; first, last
    const [documents, withoutContentId, ...counts] = reply;
    const [first, last] = counts.slice(3 * periods.length) as (string | null)[];
    return rangeUsage(
      range,
      { documents: Number(documents), documentsWithoutContentId: Number(withoutContentId) },
      (period) => {
        const index = periods.indexOf(period);
        return { documents: Number(counts[index]), documentsWithoutContentId: Number(counts[periods.length + index]), opens: Number(counts[2 * periods.length + index]) };
      },
      { first, last },
    );
  }

  async usageBy(licenseKey: string, from: string, to: string, key: string): Promise<GroupedUsage> {
    const range = parseUsageRange(from, to, MAX_GROUPED_RANGE_DAYS);
    const reply = await this.guard(
      async () =>
        (await this.redis.eval(GROUP_USAGE, {
          arguments: [`${KEY_PREFIX}${licenseKey}`, `ds:usage:tmp:${randomUUID()}`, dimensionId(key), String(range.months.length), ...range.months, ...range.buckets],
        })) as (number | string)[],
    );
    // reply per value: id, text, documents, opens, then documents and opens of each month
    const counts: ValueCounts[] = [];
    for (let i = 0; i < reply.length; i += 4 + 2 * range.months.length) {
      const months = range.months.map((_, m) => ({ documents: Number(reply[i + 4 + 2 * m]), opens: Number(reply[i + 5 + 2 * m]) }));
      counts.push({ valueId: String(reply[i]), value: String(reply[i + 1]), documents: Number(reply[i + 2]), opens: Number(reply[i + 3]), months });
    }
    return groupedUsage(key, range, counts);
  }

  health(): Promise<void> {
    return this.guard(async () => {
      await this.redis.ping();
    });
  }

  async close(): Promise<void> {
    if (this.redis.isOpen) await this.redis.close();
  }

  private async applyChunk(batch: PartitionBatch, chunk: Chunk, after: string, acceptGap: boolean): Promise<[number, number]> {
    const entries = usageEntries(chunk.records.map((r) => r.record));
    const args = [fencesKey(batch.topic), String(batch.partition), String(chunk.first), String(chunk.last), after, acceptGap ? "1" : "0"];
    for (const g of groupEntries(entries, (e) => `${e.day}|${e.dimensionsKey}|${e.licenseKey}`).values()) {
      args.push(g.licenseKey, g.day, g.month, String(g.eventIds.length), ...groupArguments(g));
    }
    return (await this.redis.eval(APPLY, { arguments: args })) as [number, number];
  }

  private guard<T>(operation: () => Promise<T>): Promise<T> {
    return guardRedis("usage store (Redis)", operation);
  }
}

/**
 * The batch in chunks of about RECORDS_PER_SCRIPT records covering its
 * offsets without gaps; the records of one offset (one Kafka message) stay in
 * one chunk, since the fence moves by offsets.
 */
function chunksOf(batch: PartitionBatch): Chunk[] {
  const chunks: Chunk[] = [];
  const { records } = batch;
  let first = batch.firstOffset;
  let start = 0;
  do {
    let end = Math.min(start + RECORDS_PER_SCRIPT, records.length);
    while (end < records.length && records[end].offset === records[end - 1].offset) end++;
    const last = end >= records.length ? batch.lastOffset : records[end - 1].offset;
    chunks.push({ first, last, records: records.slice(start, end) });
    first = last + 1;
    start = end;
  } while (start < records.length);
  return chunks;
}

interface CountGroup {
  licenseKey: string;
  day: string;
  month: string;
  eventIds: string[];
  members: Set<string>;
  /** The members whose documentId is not a content id. */
  idless: Set<string>;
  dimensions: Dimension[];
  first: string;
  last: string;
}

/** What COUNT_GROUP reads of a group, from its number of members on (see APPLY and RECORD); the eventIds of RECORD go before the members. */
function groupArguments(g: CountGroup, eventIds: string[] = []): string[] {
  const dimensions = g.dimensions.flatMap((d) => [d.keyId, d.key, d.valueId, d.value]);
  return [String(g.members.size), g.first, g.last, String(g.idless.size), String(g.dimensions.length), ...eventIds, ...g.members, ...g.idless, ...dimensions];
}

/** The entries grouped by `keyOf`, each group within one license key, one day and one set of dimensions. */
function groupEntries(entries: UsageEntry[], keyOf: (entry: UsageEntry, index: number) => string): Map<string, CountGroup> {
  const groups = new Map<string, CountGroup>();
  entries.forEach((e, index) => {
    const key = keyOf(e, index);
    const group = groups.get(key);
    if (!group) {
      const { licenseKey, day, month, openedAt, dimensions } = e;
      const idless = new Set(e.contentId ? [] : [e.member]);
      groups.set(key, { licenseKey, day, month, eventIds: [e.eventId], members: new Set([e.member]), idless, dimensions, first: openedAt, last: openedAt });
      return;
    }
    group.eventIds.push(e.eventId);
    group.members.add(e.member);
    if (!e.contentId) group.idless.add(e.member);
    if (e.openedAt < group.first) group.first = e.openedAt;
    if (e.openedAt > group.last) group.last = e.openedAt;
  });
  return groups;
}

/** The RECORD script's arguments: the entries grouped by license key, day and minute received. */
function recordArguments(records: UsageRecord[], entries: UsageEntry[]): string[] {
  const groups = groupEntries(entries, (e, index) => `${minuteReceived(records[index])}|${e.day}|${e.dimensionsKey}|${e.licenseKey}`);
  const args = [String(EVENT_ID_MEMORY_SECONDS)];
  for (const [key, g] of groups) {
    const minute = key.slice(0, key.indexOf("|"));
    args.push(g.licenseKey, g.day, g.month, minute, String(g.eventIds.length), ...groupArguments(g, g.eventIds.map(seenMember)));
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
