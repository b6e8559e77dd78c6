import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { documentMember, parseUsageRange, usageEntries } from "./usage-range.js";
import type { UsageRecord } from "../usage-record.js";

/** The member's definition, written out: SHA-256 of the canonical JSON, first 16 bytes, base64url. */
const expectedMember = (canonical: string) => createHash("sha256").update(canonical).digest().subarray(0, 16).toString("base64url");

const record = (overrides: Partial<UsageRecord>): UsageRecord => ({
  eventId: "e1",
  licenseKey: "lic_test",
  documentId: "HASH-1A2B3C4D",
  documentCreatedAt: null,
  openedAt: "2026-11-21T09:30:00.000Z",
  receivedAt: "2026-11-21T09:30:01.000Z",
  libraryVersion: "0.1.0",
  hostname: "",
  metadata: {},
  ...overrides,
});

describe("documentMember", () => {
  test("hashes the documentId alone, in the text usage stored before used for a report without metadata", () => {
    assert.equal(documentMember("HASH-1A2B3C4D"), expectedMember('{"documentId":"HASH-1A2B3C4D","metadata":{}}'));
    assert.equal(documentMember('a "quoted" é'), expectedMember('{"documentId":"a \\"quoted\\" é","metadata":{}}'));
    assert.match(documentMember("HASH-1"), /^[\w-]{22}$/);
  });

  test("the same documentId is the same member whatever metadata its reports carry", () => {
    const entries = usageEntries([record({ metadata: { user: "u1" } }), record({ metadata: { user: "u2", ctx: { plan: "pro" } } }), record({ documentId: "HASH-2" })]);
    assert.equal(entries[0].member, entries[1].member);
    assert.notEqual(entries[2].member, entries[0].member);
  });
});

describe("usageEntries", () => {
  test("a record counts on the UTC day and month of its openedAt", () => {
    const [entry] = usageEntries([record({ openedAt: "2026-11-30T23:30:00.000-02:00" })]);
    assert.deepEqual({ day: entry.day, month: entry.month, openedAt: entry.openedAt }, { day: "2026-12-01", month: "2026-12", openedAt: "2026-12-01T01:30:00.000Z" });
  });

  test("a record whose openedAt is not a date fails the batch, naming it", () => {
    assert.throws(() => usageEntries([record({}), record({ openedAt: "yesterday" })]), (error: Error & { details?: unknown }) => {
      assert.deepEqual(error.details, [{ field: "records[1].openedAt", issue: "must be an ISO 8601 date between years 0 and 9999" }]);
      return true;
    });
  });
});

describe("parseUsageRange", () => {
  test("a whole month stands for its days in the union", () => {
    const range = parseUsageRange("2026-10-31", "2026-12-02");
    assert.deepEqual(range.months, ["2026-10", "2026-11", "2026-12"]);
    assert.deepEqual(range.buckets, ["2026-10-31", "2026-11", "2026-12-01", "2026-12-02"]);
    assert.equal(range.days.length, 33);
  });
});
