import assert from "node:assert/strict";
import { test } from "node:test";
import { ServiceError } from "../../core/errors.js";
import { usageReportFromJson } from "./collect-request-schema.js";

const KEY = "lic_12345678";
const parseCollectRequest = (body: unknown) => usageReportFromJson(body, KEY);
const event = { timestamp: "2026-11-21T09:30:00.000Z", documentId: "HASH-1", documentCreatedAt: null };

function issues(body: unknown): Array<{ field: string; issue: string }> {
  try {
    parseCollectRequest(body);
  } catch (error) {
    assert.ok(error instanceof ServiceError && error.code === "VALIDATION_ERROR", String(error));
    return error.details!;
  }
  assert.fail("the body was accepted");
}

test("a reference-client report becomes a UsageReport, with defaults for what a non-browser client leaves out", () => {
  const parsed = parseCollectRequest({ superdocVersion: "0.20.0", extra: true, events: [{ timestamp: event.timestamp, documentId: "HASH-1", more: 1 }] });
  assert.deepEqual(parsed, {
    licenseKey: KEY,
    libraryVersion: "0.20.0",
    hostname: "",
    metadata: {},
    metadataDropped: [],
    events: [{ documentId: "HASH-1", documentCreatedAt: null, openedAt: event.timestamp }],
  });
  assert.equal(parseCollectRequest({ libraryVersion: "1.0", superdocVersion: "0.20.0", events: [event] }).libraryVersion, "1.0");
  assert.equal(parseCollectRequest({ libraryVersion: "1", browserInfo: { hostname: "editor.example" }, events: [event] }).hostname, "editor.example");
});

test("a timestamp with an offset counts for its UTC day: openedAt is UTC with milliseconds", () => {
  const parsed = parseCollectRequest({ libraryVersion: "1", events: [{ ...event, timestamp: "2026-11-21T01:30:00.000+02:00" }] });
  assert.equal(parsed.events[0].openedAt, "2026-11-20T23:30:00.000Z");
});

test("the reference editor's metadata, nulls and nested objects included, is kept as sent", () => {
  const metadata = { tenant: "t1", user: null, ctx: { plan: "pro", seats: 5, trial: false, tags: ["a", "b"] } };
  const parsed = parseCollectRequest({ superdocVersion: "2.11.0", metadata, events: [event] });
  assert.deepEqual(parsed.metadata, metadata);
  assert.deepEqual(parsed.metadataDropped, []);
  for (const none of [null, undefined, {}]) assert.deepEqual(parseCollectRequest({ libraryVersion: "1", metadata: none, events: [event] }).metadata, {});
});

test("metadata beyond its limits is left out where it goes beyond them, and the report is kept", () => {
  const parsed = parseCollectRequest({ libraryVersion: "1", metadata: { a: { b: { c: { d: { e: 1 } } } }, pad: "x".repeat(3000), ok: 1 }, events: [event] });
  assert.deepEqual(parsed.metadata, { a: { b: { c: {} } }, ok: 1 });
  assert.deepEqual(parsed.metadataDropped, [
    { path: "metadata.a.b.c.d", reason: "too deep" },
    { path: "metadata.pad", reason: "too large" },
  ]);
  for (const notAnObject of ["tenant", 5, [1, 2], true]) {
    assert.deepEqual(parseCollectRequest({ libraryVersion: "1", metadata: notAnObject, events: [event] }).metadataDropped, [{ path: "metadata", reason: "not an object" }]);
  }
});

test("dates and times of any precision are accepted as documentCreatedAt", () => {
  const parsed = parseCollectRequest({
    libraryVersion: "1",
    events: ["2011-11-24T13:24:12.00Z", "2011-11-24", "2011-11-24T13:24+01:00"].map((documentCreatedAt) => ({ ...event, documentCreatedAt })),
  });
  assert.deepEqual(parsed.events.map((e) => e.documentCreatedAt), ["2011-11-24T13:24:12.00Z", "2011-11-24", "2011-11-24T13:24+01:00"]);
});

test("every problem is named by its path in the JSON", () => {
  assert.deepEqual(
    issues({ libraryVersion: 2, browserInfo: { screenSize: { width: "wide" } }, events: [{ ...event, timestamp: "2026-11-21T09:30:00Z" }, { documentCreatedAt: 5 }] }).map((i) => i.field),
    ["libraryVersion", "browserInfo.screenSize.width", "events[0].timestamp", "events[1].timestamp", "events[1].documentId", "events[1].documentCreatedAt"],
  );
  assert.deepEqual(issues([event]), [{ field: "body", issue: "must be object" }]);
  assert.deepEqual(issues({ events: [event] }), [{ field: "libraryVersion", issue: "is required (or superdocVersion)" }]);
  assert.match(issues({ libraryVersion: "1", events: [{ ...event, timestamp: "2026-13-01T00:00:00.000Z" }] })[0].issue, /ISO 8601 time with milliseconds/);
  assert.deepEqual(issues({ libraryVersion: "1", events: [] }).map((i) => i.field), ["events"]);
  assert.deepEqual(issues({ libraryVersion: "1", events: Array.from({ length: 101 }, () => event) }).map((i) => i.field), ["events"]);
  assert.deepEqual(issues({ libraryVersion: "1", events: [{ ...event, documentId: "x".repeat(129) }] }).map((i) => i.field), ["events[0].documentId"]);
});

test("a timestamp's day must exist: every day 01-31 of every month of 1900, 2000, 2024-2028 and 2100, judged as the calendar does", () => {
  // a clock in 2101, so that every real day of 2000-2100 is within the event times accepted (1900 is before them)
  const in2101 = Date.parse("2101-01-01T00:00:00.000Z");
  for (const year of [1900, 2000, 2024, 2025, 2026, 2027, 2028, 2100]) {
    for (let month = 1; month <= 12; month++) {
      for (let day = 1; day <= 31; day++) {
        const date = `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
        const real = new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
        const body = { libraryVersion: "1", events: [{ ...event, timestamp: `${date}T09:30:00.000Z` }] };
        const refused = !real && issues(body).some((issue) => issue.issue === "is not a real calendar date");
        if (real && year >= 2000) usageReportFromJson(body, KEY, in2101);
        assert.equal(refused, !real, date);
      }
    }
  }
});

test("an open counts on its UTC day: an offset moves it, also across the earliest time accepted", () => {
  const opened = (timestamp: string) => parseCollectRequest({ libraryVersion: "1", events: [{ ...event, timestamp }] }).events[0].openedAt;
  assert.equal(opened("2026-11-21T09:30:00.123Z"), "2026-11-21T09:30:00.123Z");
  assert.equal(opened("2026-11-21T23:30:00.000-01:00"), "2026-11-22T00:30:00.000Z");
  assert.equal(opened("2000-01-01T00:30:00.000+00:30"), "2000-01-01T00:00:00.000Z");
  for (const timestamp of ["2000-01-01T00:30:00.000+01:00", "0000-01-01T00:00:00.000+01:00", "9999-12-31T23:30:00.000-01:00"]) {
    assert.deepEqual(issues({ libraryVersion: "1", events: [{ ...event, timestamp }] }).map((i) => i.field), ["events[0].timestamp"], timestamp);
  }
});

test("event times: from 2000-01-01 to a day past the server's clock, decided once per report; outside is a 400 naming each event", () => {
  const now = Date.parse("2026-12-06T18:00:00.000Z");
  const at = (ms: number) => new Date(ms).toISOString();
  const DAY = 24 * 3600 * 1000;
  const report = (...timestamps: string[]) => ({ libraryVersion: "1", events: timestamps.map((timestamp) => ({ ...event, timestamp })) });
  const accepted = [at(now), at(now + 5 * 60_000), at(now + DAY), "2000-01-01T00:00:00.000Z", "2026-11-21T09:30:00.000Z"];
  assert.deepEqual(usageReportFromJson(report(...accepted), KEY, now).events.map((e) => e.openedAt), accepted);

  const refused = ["0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000Z", at(now + 7 * DAY), at(now + DAY + 1), "1999-12-31T23:59:59.999Z"];
  try {
    usageReportFromJson(report(at(now), ...refused), KEY, now);
    assert.fail("accepted");
  } catch (error) {
    assert.ok(error instanceof ServiceError && error.code === "VALIDATION_ERROR" && error.httpStatus === 400, String(error));
    const issue = "must be from 2000-01-01T00:00:00.000Z to a day past the server's clock (2026-12-07T18:00:00.000Z)";
    assert.deepEqual(error.details, refused.map((_, i) => ({ field: `events[${i + 1}].timestamp`, issue })));
  }

  // by the real clock, as the route calls it: the reference client's `new Date().toISOString()`, and a clock minutes ahead
  parseCollectRequest(report(new Date().toISOString(), at(Date.now() + 10 * 60_000)));
  assert.deepEqual(issues(report(at(Date.now() + 7 * DAY))).map((i) => i.field), ["events[0].timestamp"]);
});

test("documentId holds no control characters; documentCreatedAt is at most 64 characters", () => {
  for (const documentId of ["HASH-1\n", "a\u0000b", "tab\there", "del\u007f", "c1\u0085"]) {
    assert.deepEqual(issues({ libraryVersion: "1", events: [{ ...event, documentId }] }), [{ field: "events[0].documentId", issue: "must not contain control characters" }]);
  }
  parseCollectRequest({ libraryVersion: "1", events: [{ ...event, documentId: "ünïcode 文書 id" }] });
  const precise = `2011-11-24T13:24:12.${"1".repeat(60)}Z`;
  assert.deepEqual(issues({ libraryVersion: "1", events: [{ ...event, documentCreatedAt: precise }] }).map((i) => i.field), ["events[0].documentCreatedAt"]);
});

test("JSON nested 20,000 levels deep, in metadata or a field nobody reads, is left out or ignored without recursing", () => {
  const deep = JSON.parse("[".repeat(20_000) + "]".repeat(20_000)) as unknown;
  assert.deepEqual(parseCollectRequest({ libraryVersion: "1", metadata: { deep }, events: [event] }).metadataDropped, [{ path: "metadata.deep[0][0][0]", reason: "too deep" }]);
  parseCollectRequest({ libraryVersion: "1", extra: deep, browserInfo: { extra: deep }, events: [{ ...event, extra: deep }] });
});
