// Usage counts for billing and the license keys allowed to report: both
// implementations of each against one contract, LMDB in a temp dir (with an
// injectable clock) and real Redis.
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ServiceError } from "../../services/core/errors.js";
import { createLogger } from "../../services/core/logger.js";
import { connectRedis, type RedisClient } from "../../services/core/redis-client.js";
import { EmbeddedLicenseKeyStore } from "../../services/telemetry/license-keys/embedded-license-key-store.js";
import { open as openLmdb } from "lmdb";
import { EmbeddedUsageStore } from "../../services/telemetry/usage/embedded-usage-store.js";
import type { LicenseKeyStore } from "../../services/telemetry/license-keys/license-key-store.js";
import { RedisLicenseKeyStore } from "../../services/telemetry/license-keys/redis-license-key-store.js";
import { RedisUsageStore } from "../../services/telemetry/usage/redis-usage-store.js";
import type { UsageRecord } from "../../services/telemetry/usage-record.js";
import { EVENT_ID_MEMORY_SECONDS, type PartitionBatch, type Usage, type UsageStore } from "../../services/telemetry/usage/usage-store.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { fromBinary, toJson } from "@bufbuild/protobuf";
import { GetUsageResponseSchema } from "../../gen/es/docservice/v1/telemetry_pb.js";
import { GetUsageResponse } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import type { UsageIntake } from "../../services/telemetry/intake/usage-intake.js";
import { TelemetryService } from "../../services/telemetry/telemetry-service.js";


/** A fresh license key per test, so the tests of one store do not see each other's counts. */
const newKey = (name: string) => `lk-${name}-${randomUUID().slice(0, 8)}`;

function open(licenseKey: string, documentId: string, openedAt: string, metadata: UsageRecord["metadata"] = {}): UsageRecord {
  return {
    eventId: randomUUID(),
    licenseKey,
    documentId,
    documentCreatedAt: null,
    openedAt,
    receivedAt: openedAt,
    libraryVersion: "1.0.0",
    hostname: "editor.example",
    metadata,
  };
}

/** The records as one partition's batch at consecutive offsets from `firstOffset`, in a topic of their own unless named. */
function batchOf(records: UsageRecord[], firstOffset: number, topic = "usage", partition = 0): PartitionBatch {
  return { topic, partition, firstOffset, lastOffset: firstOffset + records.length - 1, records: records.map((record, i) => ({ offset: firstOffset + i, record })) };
}

const byDay = (usage: Usage) => usage.byDay.map((d) => [d.date, d.documents, d.opens]);
const byMonth = (usage: Usage) => usage.byMonth.map((m) => [m.month, m.documents, m.opens]);

function assertServiceError(code: string, fields?: string[]) {
  return (error: unknown) => {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, code);
    if (fields) assert.deepEqual(error.details?.map((d) => d.field), fields);
    return true;
  };
}

/** Records many opens in Kafka-sized batches and checks the counts are exact, not estimated. */
async function recordAtVolume(store: UsageStore, label: string) {
  const licenseKey = newKey("volume");
  const days = ["2026-05-30", "2026-05-31", "2026-06-01"];
  const records: UsageRecord[] = [];
  const perDay = days.map(() => new Set<string>());
  for (let i = 0; i < 20_000; i++) {
    const document = (i * 7919) % 5000; // every one of 5,000 documents, 4 times each, spread over the days
    const day = (i * 31 + Math.floor(i / 5000)) % 3;
    perDay[day].add(`doc-${document}`);
    records.push(open(licenseKey, `doc-${document}`, `${days[day]}T${String(i % 24).padStart(2, "0")}:00:00.000Z`));
  }
  const started = performance.now();
  for (let i = 0; i < records.length; i += 1000) await store.record(records.slice(i, i + 1000));
  const recordMs = performance.now() - started;
  const queried = performance.now();
  const usage = await store.usage(licenseKey, days[0], days[2]);
  const usageMs = performance.now() - queried;
  console.log(`${label}: recorded 20,000 records in ${recordMs.toFixed(0)} ms (batches of 1,000); usage over 3 days in ${usageMs.toFixed(1)} ms`);

  assert.equal(usage.documents, 5000);
  assert.equal(usage.opens, 20_000);
  assert.deepEqual(
    usage.byDay.map((d) => d.documents),
    perDay.map((s) => s.size),
  );
  const may = new Set([...perDay[0], ...perDay[1]]).size;
  assert.deepEqual(byMonth(usage), [
    ["2026-05", may, usage.byDay[0].opens + usage.byDay[1].opens],
    ["2026-06", perDay[2].size, usage.byDay[2].opens],
  ]);

  await store.record(records.slice(0, 5000)); // a replayed partition
  assert.deepEqual(await store.usage(licenseKey, days[0], days[2]), usage);
}

/** The member a record had before metadata became dimensions: SHA-256 of its documentId with its metadata (keys sorted), 16 bytes, base64url. */
function earlierMember(documentId: string, metadata: Record<string, string>): string {
  const fields = Object.keys(metadata).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(metadata[k])}`);
  return createHash("sha256").update(`{"documentId":${JSON.stringify(documentId)},"metadata":{${fields.join(",")}}}`).digest().subarray(0, 16).toString("base64url");
}

/**
 * Usage counted under the earlier rule (a document per documentId and metadata), written as that
 * version wrote it, then new opens of the same documents: a document counted from reports without
 * metadata meets its new opens; one counted with metadata keeps the member it had.
 */
async function earlierUsageKeepsAnswering(writeEarlier: (key: string, day: string, members: string[], opens: number) => Promise<UsageStore>) {
  const key = newKey("earlier");
  const store = await writeEarlier(key, "2026-06-01", [earlierMember("HASH-00000001", {}), earlierMember("HASH-00000002", { tenant: "a" })], 2);
  const before = await store.usage(key, "2026-06-01", "2026-06-01");
  assert.deepEqual([before.documents, before.opens], [2, 2], "stored usage answers as it did");
  await store.record([open(key, "HASH-00000001", "2026-06-01T10:00:00.000Z", { tenant: "b" }), open(key, "HASH-00000002", "2026-06-01T11:00:00.000Z", { tenant: "a" })]);
  const after = await store.usage(key, "2026-06-01", "2026-06-01");
  assert.deepEqual([after.documents, after.opens], [3, 4], "HASH-00000001 met its earlier member; HASH-00000002's earlier one was per metadata");
}

/**
 * GetUsage of `licenseKey` over `store` as gRPC and Connect answer it: the response, its first and
 * last seen, and the same as Connect's JSON (ts-proto's binary read by protobuf-es, as the gateway's
 * bridge does), which throws for a Timestamp outside 0001-9999 or with negative nanos.
 */
async function getUsageOverTheWire(store: UsageStore, licenseKey: string, from: string, to: string) {
  const telemetry = new TelemetryService({} as UsageIntake, store, {} as LicenseKeyStore);
  const response = await telemetry.getUsage({ licenseKey, from, to, groupBy: "" });
  const json = toJson(GetUsageResponseSchema, fromBinary(GetUsageResponseSchema, GetUsageResponse.encode(response).finish())) as { firstSeen?: string; lastSeen?: string };
  const iso = (text: string | undefined) => (text === undefined ? undefined : new Date(text).toISOString());
  return { response, seen: [response.firstSeen?.toISOString(), response.lastSeen?.toISOString()], jsonSeen: [iso(json.firstSeen), iso(json.lastSeen)] };
}

function usageContract(store: () => UsageStore) {
  test("first/last seen accepted before event times were bounded never fail GetUsage: what a Timestamp cannot hold is left out, for every range", async () => {
    const cases: Array<[opens: string[], firstSeen: string | undefined, lastSeen: string | undefined]> = [
      // year 0, as /v1/collect accepted it: outside Timestamp's range
      [["0000-01-01T00:00:00.000Z", "2026-11-20T10:00:00.000Z"], undefined, "2026-11-20T10:00:00.000Z"],
      // before 1970 with milliseconds: negative nanos in ts-proto's Timestamp; the last day of year 9999 is within range
      [["1969-12-31T23:59:59.500Z", "9999-12-31T23:59:59.999Z"], undefined, "9999-12-31T23:59:59.999Z"],
      // Timestamp's first second, and whole seconds before 1970, are told
      [["0001-01-01T00:00:00.000Z", "1969-12-31T23:59:59.000Z"], "0001-01-01T00:00:00.000Z", "1969-12-31T23:59:59.000Z"],
    ];
    for (const [opens, firstSeen, lastSeen] of cases) {
      const key = newKey("seen");
      // as the spool or Kafka replays records accepted before the rule: still applied, and held as written
      await store().record(opens.map((openedAt, i) => open(key, `HASH-0000000${i}`, openedAt)));
      const stored = await store().usage(key, "2026-11-20", "2026-11-20");
      assert.deepEqual([stored.firstSeen, stored.lastSeen], opens);
      for (const [from, to] of [["2026-11-01", "2026-11-30"], ["2020-01-01", "2020-01-31"], ["9999-12-01", "9999-12-31"]]) {
        const { seen, jsonSeen } = await getUsageOverTheWire(store(), key, from, to);
        assert.deepEqual(seen, [firstSeen, lastSeen], `${opens.join(", ")}: ${from}..${to}`);
        assert.deepEqual(jsonSeen, [firstSeen, lastSeen]);
      }
    }
  });

  test("groupBy a metadata key: exact documents and opens per value, per month and over the range; a document under two values counts in each", async () => {
    const key = newKey("groups");
    await store().record([
      open(key, "HASH-00000001", "2026-09-29T10:00:00.000Z", { tenant: "t1", plan: "pro" }),
      open(key, "HASH-00000001", "2026-09-30T10:00:00.000Z", { tenant: "t1", user: "u2" }),
      open(key, "HASH-00000002", "2026-10-01T10:00:00.000Z", { tenant: "t2", ctx: { plan: "pro" } }),
      open(key, "HASH-00000001", "2026-10-02T10:00:00.000Z", { tenant: "t2" }),
      open(key, "HASH-00000003", "2026-10-02T11:00:00.000Z", { tenant: 5 }),
      open(key, "HASH-00000004", "2026-10-02T12:00:00.000Z"),
    ]);
    const months = (september: [number, number], october: [number, number]) => [
      { month: "2026-09", documents: september[0], opens: september[1] },
      { month: "2026-10", documents: october[0], opens: october[1] },
    ];
    assert.deepEqual(await store().usageBy(key, "2026-09-29", "2026-10-02", "tenant"), {
      key: "tenant",
      groups: [
        { value: "t2", documents: 2, opens: 2, byMonth: months([0, 0], [2, 2]) },
        { value: "t1", documents: 1, opens: 2, byMonth: months([1, 2], [0, 0]) },
        { value: "5", documents: 1, opens: 1, byMonth: months([0, 0], [1, 1]) },
      ],
    });
    const total = await store().usage(key, "2026-09-29", "2026-10-02");
    assert.deepEqual([total.documents, total.opens], [4, 6], "every document once, whatever its values");
    assert.deepEqual((await store().usageBy(key, "2026-09-29", "2026-10-02", "ctx")).groups.map((g) => [g.value, g.documents]), [['{"plan":"pro"}', 1]]);
    // a part of a month: the range's counts, the month's whole
    assert.deepEqual(await store().usageBy(key, "2026-10-02", "2026-10-02", "tenant"), {
      key: "tenant",
      groups: [
        { value: "5", documents: 1, opens: 1, byMonth: [{ month: "2026-10", documents: 1, opens: 1 }] },
        { value: "t2", documents: 1, opens: 1, byMonth: [{ month: "2026-10", documents: 2, opens: 2 }] },
      ],
    });
    assert.deepEqual(await store().usageBy(key, "2026-09-29", "2026-10-02", "never-sent"), { key: "never-sent", groups: [] });
    await assert.rejects(store().usageBy(key, "2026-09-01", "2026-10-02", "tenant"), assertServiceError("VALIDATION_ERROR", ["to"]));
  });

  test("documents without a content id are counted apart: an application's own ids and a random one per open", async () => {
    const key = newKey("content-ids");
    await store().record([
      open(key, "HASH-0000000A", "2026-09-10T10:00:00.000Z"),
      open(key, "HASH-0000000A", "2026-09-10T11:00:00.000Z"),
      open(key, randomUUID(), "2026-09-10T12:00:00.000Z"),
      open(key, randomUUID(), "2026-09-10T13:00:00.000Z"),
      open(key, "invoice-2026-0001", "2026-09-11T10:00:00.000Z"),
      open(key, "hash-0000000a", "2026-09-11T11:00:00.000Z"),
    ]);
    const usage = await store().usage(key, "2026-09-10", "2026-09-11");
    assert.deepEqual([usage.documents, usage.documentsWithoutContentId, usage.opens], [5, 4, 6]);
    assert.deepEqual(
      usage.byDay.map((d) => [d.date, d.documents, d.documentsWithoutContentId]),
      [
        ["2026-09-10", 3, 2],
        ["2026-09-11", 2, 2],
      ],
    );
    assert.equal(usage.byMonth[0].documentsWithoutContentId, 4);
  });

  test("a month counts 1,000 values of a key, the next together as other values, and 64 keys; the next month starts afresh", async () => {
    const key = newKey("bounded");
    const tenants = Array.from({ length: 1005 }, (_, i) => open(key, `HASH-${i.toString(16).toUpperCase().padStart(8, "0")}`, "2026-08-03T10:00:00.000Z", { tenant: `t${i}` }));
    for (let i = 0; i < tenants.length; i += 500) await store().record(tenants.slice(i, i + 500));
    // with tenant, 64 keys that month
    const many = Object.fromEntries(Array.from({ length: 63 }, (_, i) => [`k${i}`, "v"]));
    await store().record([open(key, "HASH-0000FFFF", "2026-08-04T10:00:00.000Z", many), open(key, "HASH-0000FFFF", "2026-08-04T11:00:00.000Z", { late: "x" })]);
    await store().record([open(key, "HASH-0000FFFF", "2026-09-01T10:00:00.000Z", { tenant: "t1004", late: "y" })]);

    const august = await store().usageBy(key, "2026-08-01", "2026-08-31", "tenant");
    assert.equal(august.groups.length, 1000);
    assert.ok(august.groups.every((g) => g.documents === 1 && g.opens === 1));
    assert.deepEqual(august.otherValues, { documents: 5, opens: 5, byMonth: [{ month: "2026-08", documents: 5, opens: 5 }] });
    assert.deepEqual((await store().usageBy(key, "2026-08-01", "2026-08-31", "k62")).groups.map((g) => g.documents), [1]);
    assert.deepEqual((await store().usageBy(key, "2026-08-01", "2026-08-31", "late")).groups, [], "a 65th key that month is not counted");
    const september = await store().usageBy(key, "2026-09-01", "2026-09-30", "tenant");
    assert.deepEqual([september.groups.map((g) => g.value), september.otherValues], [["t1004"], undefined]);
    assert.deepEqual((await store().usageBy(key, "2026-09-01", "2026-09-30", "late")).groups.map((g) => g.value), ["y"]);
  });

  test("distinct documents are exact per day, per month and over the range; opens count every event", async () => {
    const key = newKey("distinct");
    await store().record([
      open(key, "d1", "2026-03-30T08:00:00.000Z"),
      open(key, "d2", "2026-03-30T09:00:00.000Z"),
      open(key, "d1", "2026-03-30T23:59:59.999Z"),
      open(key, "d1", "2026-03-31T00:00:00.000Z"),
      open(key, "d3", "2026-03-31T10:00:00.000Z"),
    ]);
    await store().record([open(key, "d4", "2026-04-01T12:00:00.000Z"), open(key, "d1", "2026-04-02T12:00:00.000Z")]);

    const usage = await store().usage(key, "2026-03-30", "2026-04-01");
    assert.equal(usage.documents, 4, "d1 on three days counts once over the range");
    assert.equal(usage.opens, 6);
    assert.deepEqual(byDay(usage), [
      ["2026-03-30", 2, 3],
      ["2026-03-31", 2, 2],
      ["2026-04-01", 1, 1],
    ]);
    assert.deepEqual(
      byMonth(usage),
      [
        ["2026-03", 3, 5],
        ["2026-04", 2, 2],
      ],
      "months are counted whole, April 2 included",
    );
    assert.equal(usage.firstSeen, "2026-03-30T08:00:00.000Z");
    assert.equal(usage.lastSeen, "2026-04-02T12:00:00.000Z");

    const oneDay = await store().usage(key, "2026-04-02", "2026-04-02");
    assert.deepEqual([oneDay.documents, oneDay.opens], [1, 1]);
  });

  test("a document is its documentId: the same id under any metadata is one document", async () => {
    const key = newKey("metadata");
    await store().record([
      open(key, "doc", "2026-07-01T10:00:00.000Z", { team: "a", app: "x" }),
      open(key, "doc", "2026-07-01T11:00:00.000Z", { user: null, ctx: { plan: "pro" } }),
      open(key, "doc", "2026-07-01T12:00:00.000Z", { team: "b", app: "x" }),
      open(key, "doc", "2026-07-01T13:00:00.000Z"),
      open(key, "other", "2026-07-01T14:00:00.000Z", { team: "a" }),
    ]);
    const usage = await store().usage(key, "2026-07-01", "2026-07-01");
    assert.deepEqual([usage.documents, usage.opens], [2, 5]);
  });

  test("replaying the same eventIds changes nothing, within a batch or across batches", async () => {
    const key = newKey("replay");
    const records = [open(key, "a", "2026-08-10T10:00:00.000Z"), open(key, "b", "2026-08-11T10:00:00.000Z"), open(key, "a", "2026-08-11T11:00:00.000Z")];
    await store().record(records);
    const before = await store().usage(key, "2026-08-10", "2026-08-11");
    assert.deepEqual([before.documents, before.opens], [2, 3]);

    await store().record(records);
    await store().record([records[1], records[1], { ...records[2] }]);
    assert.deepEqual(await store().usage(key, "2026-08-10", "2026-08-11"), before);

    const other = newKey("replay-in-batch");
    const twice = open(other, "c", "2026-08-10T10:00:00.000Z");
    await store().record([twice, twice, { ...twice }]);
    const usage = await store().usage(other, "2026-08-10", "2026-08-10");
    assert.deepEqual([usage.documents, usage.opens], [1, 1]);
  });

  test("a partition batch counts once: redelivered, redelivered in part, or applied by two consumers at once", async () => {
    const key = newKey("fence");
    const topic = `t-${key}`;
    const records = Array.from({ length: 30 }, (_, i) => open(key, `d${i % 7}`, `2026-10-0${1 + (i % 3)}T10:00:00.000Z`));
    assert.deepEqual(await store().applyPartitionBatch(batchOf(records.slice(0, 10), 0, topic)), { applied: 10 });
    assert.deepEqual(await store().applyPartitionBatch(batchOf(records.slice(0, 10), 0, topic)), { applied: 0 });
    assert.deepEqual(await store().applyPartitionBatch(batchOf(records.slice(5, 20), 5, topic)), { applied: 10 }, "only offsets 10-19 are new");
    const twice = await Promise.all([store().applyPartitionBatch(batchOf(records.slice(20), 20, topic)), store().applyPartitionBatch(batchOf(records.slice(20), 20, topic))]);
    assert.deepEqual(twice.map((r) => ("applied" in r ? r.applied : -1)).sort(), [0, 10]);
    // the same offsets of another partition are other records
    assert.deepEqual(await store().applyPartitionBatch(batchOf(records.slice(0, 3), 0, topic, 1)), { applied: 3 });
    const usage = await store().usage(key, "2026-10-01", "2026-10-03");
    assert.deepEqual([usage.documents, usage.opens], [7, 33]);
  });

  test("messages that are not usage records move the fence; a batch after a gap is refused as behind, unless the gap is accepted", async () => {
    const key = newKey("gap");
    const topic = `t-${key}`;
    const records = Array.from({ length: 4 }, (_, i) => open(key, `d${i}`, "2026-10-05T10:00:00.000Z"));
    // offsets 0-4: records at 0 and 3, three foreign messages
    const batch: PartitionBatch = { topic, partition: 0, firstOffset: 0, lastOffset: 4, records: [{ offset: 0, record: records[0] }, { offset: 3, record: records[1] }] };
    assert.deepEqual(await store().applyPartitionBatch(batch), { applied: 2 });
    assert.deepEqual(await store().applyPartitionBatch(batchOf([records[2]], 5, topic)), { applied: 1 });
    assert.deepEqual(await store().applyPartitionBatch(batchOf([records[3]], 9, topic)), { behind: 5 });
    assert.deepEqual(await store().applyPartitionBatch(batchOf([records[3]], 9, topic), { acceptGap: true }), { applied: 1 });
    assert.deepEqual((await store().usage(key, "2026-10-05", "2026-10-05")).opens, 4);
  });

  test("fences at or beyond a partition's high watermark are dropped (the topic was created again); the others stay", async () => {
    const key = newKey("recreated");
    const topic = `t-${key}`;
    const records = Array.from({ length: 6 }, (_, i) => open(key, `d${i}`, "2026-10-06T10:00:00.000Z"));
    await store().applyPartitionBatch(batchOf(records.slice(0, 3), 0, topic, 0));
    await store().applyPartitionBatch(batchOf(records.slice(0, 3), 0, topic, 1));
    assert.deepEqual(await store().dropStaleFences(topic, new Map([[0, 1], [1, 3], [2, 0]])), [0]);
    assert.deepEqual(await store().applyPartitionBatch(batchOf(records.slice(3), 0, topic, 0)), { applied: 3 }, "offsets from 0 again count");
    assert.deepEqual(await store().applyPartitionBatch(batchOf(records.slice(3), 0, topic, 1)), { applied: 0 });
    assert.equal((await store().usage(key, "2026-10-06", "2026-10-06")).opens, 9);
  });

  test("large batches: redelivered from the middle of one script's part, every record counts once", async () => {
    const key = newKey("large");
    const topic = `t-${key}`;
    const records = Array.from({ length: 3500 }, (_, i) => open(key, `d${i % 1000}`, "2026-10-07T10:00:00.000Z"));
    assert.deepEqual(await store().applyPartitionBatch(batchOf(records.slice(0, 2500), 0, topic)), { applied: 2500 });
    assert.deepEqual(await store().applyPartitionBatch(batchOf(records.slice(1500), 1500, topic)), { applied: 1000 });
    const usage = await store().usage(key, "2026-10-07", "2026-10-07");
    assert.deepEqual([usage.documents, usage.opens], [1000, 3500]);
  });

  test("messages of several records (a report each): one offset per message; redelivered from any message, across scripts' parts, every record counts once", async () => {
    const key = newKey("reports");
    const topic = `t-${key}`;
    // 700 messages of 7 records each: 4,900 records at offsets 0-699, so a script's part of about 1,000 records ends between messages
    const records = Array.from({ length: 4900 }, (_, i) => ({ offset: Math.floor(i / 7), record: open(key, `d${i % 1200}`, "2026-10-08T10:00:00.000Z") }));
    const batch = (from: number, to: number): PartitionBatch => ({ topic, partition: 0, firstOffset: from, lastOffset: to, records: records.filter((r) => r.offset >= from && r.offset <= to) });
    assert.deepEqual(await store().applyPartitionBatch(batch(0, 399)), { applied: 2800 });
    assert.deepEqual(await store().applyPartitionBatch(batch(250, 699)), { applied: 2100 }, "redelivered from a message in the middle");
    assert.deepEqual(await store().applyPartitionBatch(batch(0, 699)), { applied: 0 });
    const usage = await store().usage(key, "2026-10-08", "2026-10-08");
    assert.deepEqual([usage.documents, usage.opens], [1200, 4900]);
  });

  test("the same document opened many times: one document, every open counted", async () => {
    const key = newKey("opens");
    await store().record(Array.from({ length: 5 }, (_, i) => open(key, "same", `2026-09-0${i + 1}T10:00:00.000Z`)));
    const usage = await store().usage(key, "2026-09-01", "2026-09-05");
    assert.deepEqual([usage.documents, usage.opens], [1, 5]);
    assert.deepEqual(
      usage.byDay.map((d) => [d.documents, d.opens]),
      Array.from({ length: 5 }, () => [1, 1]),
      "once per day",
    );
  });

  test("every day of the range is listed, zeros included; a key without usage has no first/last seen", async () => {
    const key = newKey("zeros");
    await store().record([open(key, "a", "2026-10-02T10:00:00.000Z"), open(key, "b", "2026-10-05T10:00:00.000Z")]);
    const usage = await store().usage(key, "2026-10-01", "2026-10-06");
    assert.deepEqual(byDay(usage), [
      ["2026-10-01", 0, 0],
      ["2026-10-02", 1, 1],
      ["2026-10-03", 0, 0],
      ["2026-10-04", 0, 0],
      ["2026-10-05", 1, 1],
      ["2026-10-06", 0, 0],
    ]);

    const none = await store().usage(newKey("unknown"), "2026-10-01", "2026-10-03");
    assert.deepEqual(none, {
      documents: 0,
      documentsWithoutContentId: 0,
      opens: 0,
      byDay: ["2026-10-01", "2026-10-02", "2026-10-03"].map((date) => ({ date, documents: 0, documentsWithoutContentId: 0, opens: 0 })),
      byMonth: [{ month: "2026-10", documents: 0, documentsWithoutContentId: 0, opens: 0 }],
    });
  });

  test("ranges across months and years, whole months included, leap days", async () => {
    const key = newKey("months");
    await store().record([
      open(key, "a", "2026-11-15T10:00:00.000Z"),
      open(key, "a", "2026-12-01T10:00:00.000Z"),
      open(key, "b", "2026-12-31T23:59:59.999Z"),
      open(key, "c", "2027-01-01T00:00:00.000Z"),
      open(key, "d", "2028-02-29T10:00:00.000Z"),
      open(key, "a", "2028-03-01T10:00:00.000Z"),
    ]);
    const yearEnd = await store().usage(key, "2026-12-31", "2027-01-01");
    assert.deepEqual([yearEnd.documents, yearEnd.opens], [2, 2]);
    assert.deepEqual(byMonth(yearEnd), [
      ["2026-12", 2, 2],
      ["2027-01", 1, 1],
    ]);

    const span = await store().usage(key, "2026-11-01", "2027-01-31");
    assert.equal(span.byDay.length, 30 + 31 + 31);
    assert.deepEqual([span.documents, span.opens], [3, 4], "whole months are unioned with partial ones exactly");
    assert.deepEqual(byMonth(span), [
      ["2026-11", 1, 1],
      ["2026-12", 2, 2],
      ["2027-01", 1, 1],
    ]);

    const mixed = await store().usage(key, "2026-11-15", "2027-01-01"); // part of November, all December, a day of January
    assert.deepEqual([mixed.documents, mixed.opens], [3, 4]);
    const missesNovember = await store().usage(key, "2026-11-16", "2026-12-31");
    assert.deepEqual([missesNovember.documents, missesNovember.opens], [2, 2]);

    const leap = await store().usage(key, "2028-02-28", "2028-03-01");
    assert.deepEqual(byDay(leap), [
      ["2028-02-28", 0, 0],
      ["2028-02-29", 1, 1],
      ["2028-03-01", 1, 1],
    ]);
    assert.equal(leap.firstSeen, "2026-11-15T10:00:00.000Z");
    assert.equal(leap.lastSeen, "2028-03-01T10:00:00.000Z");
  });

  test("openedAt is normalized to UTC: the event counts on its UTC day; first/last compare as times", async () => {
    const key = newKey("utc");
    // Local dates June 30 and July 1; UTC days July 1 and June 30.
    await store().record([open(key, "a", "2026-06-30T23:30:00-02:00"), open(key, "b", "2026-07-01T00:30:00+02:00")]);
    const usage = await store().usage(key, "2026-06-30", "2026-07-01");
    assert.deepEqual(byDay(usage), [
      ["2026-06-30", 1, 1],
      ["2026-07-01", 1, 1],
    ]);
    assert.equal(usage.firstSeen, "2026-06-30T22:30:00.000Z");
    assert.equal(usage.lastSeen, "2026-07-01T01:30:00.000Z");
  });

  test("invalid ranges → VALIDATION_ERROR naming the field", async () => {
    const key = newKey("invalid");
    const cases: [string, string, string[]][] = [
      ["2026-13-01", "2026-12-01", ["from"]],
      ["2026-02-30", "2026-03-01", ["from"]],
      ["2027-02-29", "2027-03-01", ["from"]],
      ["20260101", "2026-01-02", ["from"]],
      ["2026-01-01", "2026-1-2", ["to"]],
      ["", "", ["from", "to"]],
      ["2026-03-02", "2026-03-01", ["to"]],
      ["2026-01-01", "2027-02-05", ["to"]],
    ];
    for (const [from, to, fields] of cases) {
      await assert.rejects(store().usage(key, from, to), assertServiceError("VALIDATION_ERROR", fields), `${from}..${to}`);
    }
    const longest = await store().usage(key, "2026-01-01", "2027-02-04");
    assert.equal(longest.byDay.length, 400);
    assert.equal(longest.byMonth.length, 14);
  });

  test("a record whose openedAt is not a date fails its whole batch before anything is written", async () => {
    const key = newKey("bad-record");
    const good = open(key, "a", "2026-04-10T10:00:00.000Z");
    await assert.rejects(store().record([good, open(key, "b", "yesterday")]), assertServiceError("VALIDATION_ERROR", ["records[1].openedAt"]));
    assert.equal((await store().usage(key, "2026-04-10", "2026-04-10")).opens, 0);
    await store().record([good]);
    assert.equal((await store().usage(key, "2026-04-10", "2026-04-10")).opens, 1, "the failed batch did not mark its eventIds");
  });

  test("license keys are counted apart", async () => {
    const [a, b] = [newKey("a"), newKey("b")];
    await store().record([open(a, "doc", "2026-02-01T10:00:00.000Z"), open(b, "doc", "2026-02-01T10:00:00.000Z"), open(b, "doc2", "2026-02-01T10:00:00.000Z")]);
    assert.equal((await store().usage(a, "2026-02-01", "2026-02-01")).documents, 1);
    assert.equal((await store().usage(b, "2026-02-01", "2026-02-01")).documents, 2);
  });

  test("health answers", async () => {
    await store().health();
  });
}

function licenseKeyContract(store: () => LicenseKeyStore) {
  test("add, find, list, remove; adding an existing key keeps it unchanged", async () => {
    const [k1, k2] = [newKey("license-1"), newKey("license-2")];
    const added = await store().add(k1, "Acme");
    assert.equal(added.licenseKey, k1);
    assert.equal(added.customer, "Acme");
    assert.ok(added.createdAt instanceof Date && !Number.isNaN(added.createdAt.getTime()));

    assert.deepEqual(await store().add(k1, "Someone else"), added);
    assert.deepEqual(await store().find(k1), added);
    assert.equal(await store().find(newKey("absent")), undefined);

    await store().add(k2, "Beta: ünïcode, \"quotes\"");
    const listed = (await store().list()).filter((k) => k.licenseKey === k1 || k.licenseKey === k2);
    assert.deepEqual(
      listed.map((k) => [k.licenseKey, k.customer]),
      [
        [k1, "Acme"],
        [k2, "Beta: ünïcode, \"quotes\""],
      ],
    );

    assert.equal(await store().remove(k1), true);
    assert.equal(await store().remove(k1), false);
    assert.equal(await store().find(k1), undefined);
    assert.ok(!(await store().list()).some((k) => k.licenseKey === k1));
  });
}

describe("EmbeddedUsageStore (LMDB)", () => {
  const dir = mkdtempSync(join(tmpdir(), "docservice-usage-"));
  let now = Date.parse("2026-11-21T00:00:00Z");
  const store = new EmbeddedUsageStore(dir, () => now);
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  usageContract(() => store);

  test("exact at volume: 20,000 records, 5,000 distinct documents over 3 days", () => recordAtVolume(store, "EmbeddedUsageStore"));

  test("usage stored under the earlier rule keeps answering, and meets new opens where it can", async () => {
    const earlierDir = mkdtempSync(join(tmpdir(), "docservice-usage-earlier-"));
    let opened: EmbeddedUsageStore | undefined;
    try {
      await earlierUsageKeepsAnswering(async (key, day, members, opens) => {
        const db = openLmdb({ path: earlierDir, compression: false });
        for (const period of [day, day.slice(0, 7)]) {
          for (const member of members) await db.put(`docs:${encodeURIComponent(key)}:${period}:${member}`, 1);
          await db.put(`opens:${encodeURIComponent(key)}:${period}`, opens);
        }
        await db.close();
        return (opened = new EmbeddedUsageStore(earlierDir, () => now));
      });
    } finally {
      await opened?.close();
      rmSync(earlierDir, { recursive: true, force: true });
    }
  });

  test("an eventId from record() is remembered for 7 days, then forgotten; counts survive reopening", async () => {
    const reopenedDir = mkdtempSync(join(tmpdir(), "docservice-usage-reopen-"));
    try {
      const key = newKey("expiry");
      const record = open(key, "a", "2026-11-20T10:00:00.000Z");
      const first = new EmbeddedUsageStore(reopenedDir, () => now);
      await first.record([record]);
      await first.close();

      now += EVENT_ID_MEMORY_SECONDS * 1000 - 1;
      const second = new EmbeddedUsageStore(reopenedDir, () => now);
      await second.record([record]);
      assert.equal((await second.usage(key, "2026-11-20", "2026-11-20")).opens, 1);
      await second.close();

      now += 2;
      const third = new EmbeddedUsageStore(reopenedDir, () => now);
      await third.record([record]);
      const usage = await third.usage(key, "2026-11-20", "2026-11-20");
      assert.deepEqual([usage.documents, usage.opens], [1, 2], "a replay after 7 days counts the open again, never the document");
      await third.close();
    } finally {
      rmSync(reopenedDir, { recursive: true, force: true });
    }
  });
});

describe("EmbeddedLicenseKeyStore (LMDB)", () => {
  const dir = mkdtempSync(join(tmpdir(), "docservice-license-keys-"));
  const store = new EmbeddedLicenseKeyStore(dir);
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  licenseKeyContract(() => store);
});

describe("RedisUsageStore and RedisLicenseKeyStore (real Redis)", () => {
  let redis: RedisServer;
  let client: RedisClient;
  let usageStore: RedisUsageStore;
  let licenseKeys: RedisLicenseKeyStore;
  before(async () => {
    redis = await startRedis();
    client = connectRedis(redis.url, createLogger("silent"));
    usageStore = new RedisUsageStore(client);
    licenseKeys = new RedisLicenseKeyStore(client);
    for (let i = 0; i < 100 && !client.isReady; i++) await sleep(50);
  });
  after(async () => {
    await usageStore?.close();
    await licenseKeys?.close();
    await redis?.stop();
  });

  usageContract(() => usageStore);
  licenseKeyContract(() => licenseKeys);

  test("exact at volume: 20,000 records, 5,000 distinct documents over 3 days", () => recordAtVolume(usageStore, "RedisUsageStore"));

  test("usage stored under the earlier rule keeps answering, and meets new opens where it can", () =>
    earlierUsageKeepsAnswering(async (key, day, members, opens) => {
      for (const period of [day, day.slice(0, 7)]) {
        await client.sAdd(`ds:usage:key:${key}:docs:${period}`, members);
        await client.hIncrBy(`ds:usage:key:${key}:opens`, period, opens);
      }
      return usageStore;
    }));

  test("eventIds from record() are kept per minute received for 7 days; a query leaves no temporary key behind", async () => {
    const record = open(newKey("ttl"), "a", "2026-11-20T10:00:00.000Z");
    await usageStore.record([record]);
    const seen = "ds:usage:seen:2026-11-20T10:00";
    assert.equal(await client.sIsMember(seen, Buffer.from(record.eventId.replaceAll("-", ""), "hex").toString("base64url")), 1);
    const ttl = await client.ttl(seen);
    assert.ok(ttl > EVENT_ID_MEMORY_SECONDS - 60 && ttl <= EVENT_ID_MEMORY_SECONDS, `ttl ${ttl}`);
    await usageStore.usage(record.licenseKey, "2026-11-01", "2026-11-30");
    assert.deepEqual(await client.keys("ds:usage:tmp:*"), []);
  });

  test("a first/last seen written straight into Redis that no Timestamp holds, or no time at all, is left out of GetUsage", async () => {
    const key = newKey("raw-seen");
    await usageStore.record([open(key, "HASH-00000001", "2026-11-20T10:00:00.000Z")]);
    await client.hSet(`ds:usage:key:${key}:span`, { first: "0000-01-01T00:00:00.000Z", last: "not a time" });
    const { response, seen, jsonSeen } = await getUsageOverTheWire(usageStore, key, "2026-11-20", "2026-11-20");
    assert.deepEqual([seen, jsonSeen, response.opens], [[undefined, undefined], [undefined, undefined], 1]);
  });

  test("eventIds that are not UUIDs are remembered too", async () => {
    const record = { ...open(newKey("ids"), "a", "2026-11-20T10:00:00.000Z"), eventId: "not-a-uuid-1" };
    await usageStore.record([record]);
    await usageStore.record([record, { ...record, eventId: "not-a-uuid-2" }]);
    assert.equal((await usageStore.usage(record.licenseKey, "2026-11-20", "2026-11-20")).opens, 2);
  });

  test("partition batches leave only billing state: day and month sets, opens, first/last seen and one offset per partition, nothing per event", async () => {
    const key = newKey("state");
    const topic = `t-${key}`;
    const records = Array.from({ length: 5000 }, (_, i) => ({ ...open(key, `d${i % 50}`, `2026-12-0${1 + (i % 2)}T10:00:00.000Z`), receivedAt: "2031-01-01T00:00:00.000Z" }));
    await usageStore.applyPartitionBatch(batchOf(records, 0, topic));
    const written = [...(await client.keys(`ds:usage:key:${key}:*`)), ...(await client.keys("ds:usage:seen:2031-*")), ...(await client.keys(`ds:usage:offsets:${topic}`))].sort();
    const base = `ds:usage:key:${key}`;
    assert.deepEqual(written, [
      `${base}:docs:2026-12`,
      `${base}:docs:2026-12-01`,
      `${base}:docs:2026-12-02`,
      // d0…d49 are not content ids
      `${base}:idless:2026-12`,
      `${base}:idless:2026-12-01`,
      `${base}:idless:2026-12-02`,
      `${base}:opens`,
      `${base}:span`,
      `ds:usage:offsets:${topic}`,
    ]);
    assert.equal(await client.hGet(`ds:usage:offsets:${topic}`, "0"), "4999");
  });

  test("Redis down → 503 UNAVAILABLE, not a hang; validation still answers 400", async () => {
    await redis.stop();
    try {
      const unavailable = assertServiceError("UNAVAILABLE");
      const key = newKey("down");
      await assert.rejects(usageStore.record([open(key, "a", "2026-11-20T10:00:00.000Z")]), unavailable);
      await assert.rejects(usageStore.usage(key, "2026-11-01", "2026-11-30"), unavailable);
      await assert.rejects(usageStore.health(), unavailable);
      await assert.rejects(licenseKeys.add(key, "Acme"), unavailable);
      await assert.rejects(licenseKeys.find(key), unavailable);
      await assert.rejects(usageStore.usage(key, "2026-11-30", "2026-11-01"), assertServiceError("VALIDATION_ERROR", ["to"]));
    } finally {
      await redis.start();
    }
    for (let i = 0; i < 100 && !client.isReady; i++) await sleep(50);
    await usageStore.health();
  });
});
