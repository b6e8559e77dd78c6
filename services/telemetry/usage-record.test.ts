import assert from "node:assert/strict";
import { test } from "node:test";
import { parseUsageRecord, parseUsageRecords, serializeUsageRecords, type UsageRecord } from "./usage-record.js";

/** The records of one report as the telemetry service makes them: shared fields, one metadata object. */
function report(licenseKey: string, events: number, metadata: UsageRecord["metadata"] = { tenant: "t1", user: null, ctx: { plan: "pro" } }): UsageRecord[] {
  return Array.from({ length: events }, (_, i) => ({
    eventId: `${licenseKey}-event-${i}`,
    licenseKey,
    documentId: `HASH-${String(i).padStart(8, "0")}`,
    documentCreatedAt: i % 2 ? null : "2026-11-01T08:00:00Z",
    openedAt: "2026-11-28T10:00:00.000Z",
    receivedAt: "2026-11-28T10:00:01.000Z",
    libraryVersion: "2.11.0",
    hostname: "app.example",
    metadata,
  }));
}

const readBack = (values: string[]) => values.flatMap(parseUsageRecords);

test("a report's records travel as one message, keyed by its license key, and read back as they were", () => {
  const records = report("lk-a", 10);
  const { keys, values } = serializeUsageRecords(records);
  assert.deepEqual(keys, ["lk-a"]);
  assert.equal(values.length, 1);
  assert.equal(values[0].split('"metadata"').length, 2, "the shared fields are written once");
  assert.deepEqual(readBack(values), records);
});

test("records of another license key, report or metadata start a new message; order is kept", () => {
  const records = [...report("lk-a", 3), ...report("lk-b", 2), ...report("lk-b", 2, { tenant: "t2" }), ...report("lk-a", 1)];
  const { keys, values } = serializeUsageRecords(records);
  assert.deepEqual(keys, ["lk-a", "lk-b", "lk-b", "lk-a"]);
  assert.deepEqual(readBack(values), records);
});

test("a message stays within 64 Ki characters; a record larger than that goes alone", () => {
  const large = { blob: "x".repeat(20_000) };
  const records = [...report("lk-a", 3000), ...report("lk-b", 1, { blob: "y".repeat(70_000) }), ...report("lk-c", 5, large)];
  const { keys, values } = serializeUsageRecords(records);
  assert.ok(values.length > 3);
  assert.ok(values.filter((value) => !value.includes("yyy")).every((value) => value.length <= 64 * 1024));
  assert.equal(keys.filter((key) => key === "lk-b").length, 1);
  assert.deepEqual(readBack(values), records);
});

test("a message from before (one record) still reads; what is not a usage record is skipped", () => {
  const [record] = report("lk-a", 1);
  assert.deepEqual(parseUsageRecords(JSON.stringify(record)), [record]);
  assert.deepEqual(parseUsageRecord(JSON.stringify(record)), record);
  for (const value of ["", "not json", "null", "[]", "{}", '{"shared":null,"events":[]}', '{"shared":{},"events":"x"}']) assert.deepEqual(parseUsageRecords(value), [], value);
  const { values } = serializeUsageRecords(report("lk-a", 3));
  const damaged = JSON.parse(values[0]) as { events: Array<Partial<UsageRecord>> };
  damaged.events[1].openedAt = "yesterday";
  delete damaged.events[2].eventId;
  assert.deepEqual(
    parseUsageRecords(JSON.stringify(damaged)).map((r) => r.eventId),
    ["lk-a-event-0"],
  );
});

test("records accepted before event times were bounded (REPORT_LIMITS.eventTime) still read back, for the spool and Kafka to replay", () => {
  const times = ["0000-01-01T00:00:00.000Z", "1969-12-31T23:59:59.500Z", "1970-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"];
  const records = report("lk-a", times.length).map((record, i) => ({ ...record, openedAt: times[i]! }));
  assert.deepEqual(readBack(serializeUsageRecords(records).values), records);
  for (const record of records) assert.deepEqual(parseUsageRecord(JSON.stringify(record)), record);
});
