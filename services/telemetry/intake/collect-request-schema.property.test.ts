import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ServiceError } from "../../core/errors.js";
import { boundMetadata } from "../../../clients/telemetry/metadata.js";
import { REPORT_LIMITS } from "../../../clients/telemetry/report-limits.js";
import { usageReportFromJson } from "./collect-request-schema.js";

const parseCollectRequest = (body: unknown) => usageReportFromJson(body, "lic_12345678");

// Property tests of the POST /v1/collect body parser: whatever JSON arrives, the answer is the
// parsed report or a VALIDATION_ERROR (400) naming fields, never another error; and every
// report a client may send is accepted and comes back as sent.

const NUM_RUNS = 300;

/** Calls the parser; anything thrown must be a 400 with at least one {field, issue}. */
function outcome(body: unknown): "accepted" | "refused" {
  try {
    parseCollectRequest(body);
    return "accepted";
  } catch (error) {
    assert.ok(error instanceof ServiceError, `not a ServiceError: ${String(error)}`);
    assert.equal(error.code, "VALIDATION_ERROR");
    assert.equal(error.httpStatus, 400);
    assert.ok(error.details && error.details.length > 0, "no details");
    for (const detail of error.details) {
      assert.equal(typeof detail.field, "string");
      assert.ok(detail.field.length > 0);
      assert.equal(typeof detail.issue, "string");
      assert.ok(detail.issue.length > 0);
    }
    return "refused";
  }
}

/** A time as `new Date().toISOString()` writes it (years 0–9999, milliseconds, Z): a document's creation may be any. */
const isoTime = fc.date({ min: new Date("0000-01-01T00:00:00.000Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true }).map((d) => d.toISOString());
/** The time of an open a client may report (REPORT_LIMITS.eventTime): from 2000-01-01 to now. */
const openTime = fc.date({ min: new Date(REPORT_LIMITS.eventTime.earliest), max: new Date(), noInvalidDate: true }).map((d) => d.toISOString());

const event = fc.record({
  timestamp: openTime,
  documentId: fc.string({ minLength: 1, maxLength: REPORT_LIMITS.maxDocumentIdChars, unit: "grapheme-ascii" }),
  documentCreatedAt: fc.option(isoTime, { nil: null }),
});

/** Any JSON object, limits or not: what goes beyond them is left out, never the report. */
const metadata = fc.dictionary(
  fc.string({ maxLength: 80 }).filter((key) => key !== "__proto__"),
  fc.jsonValue({ maxDepth: 6 }),
  { maxKeys: 80 },
);

const validReport = fc.record(
  {
    libraryVersion: fc.string({ maxLength: 64 }),
    browserInfo: fc.record({
      userAgent: fc.string({ maxLength: 100 }),
      currentUrl: fc.webUrl(),
      hostname: fc.domain(),
      screenSize: fc.record({ width: fc.nat({ max: 100_000 }), height: fc.nat({ max: 100_000 }) }),
    }),
    metadata,
    events: fc.array(event, { minLength: 1, maxLength: REPORT_LIMITS.maxEvents }),
  },
  { requiredKeys: ["libraryVersion", "events"] },
).map((report) => JSON.parse(JSON.stringify(report)) as typeof report); // as the gateway receives it

/** A valid report with one part replaced by anything: near misses reach the deeper checks. */
const nearMiss = fc
  .tuple(validReport, fc.constantFrom("libraryVersion", "browserInfo", "metadata", "events", "events.0", "events.0.timestamp", "events.0.documentId", "events.0.documentCreatedAt"), fc.jsonValue())
  .map(([report, path, value]) => {
    const copy = structuredClone(report) as Record<string, any>;
    const keys = path.split(".");
    let target = copy;
    for (const key of keys.slice(0, -1)) target = target[key];
    target[keys.at(-1)!] = value;
    return copy;
  });

describe("usageReportFromJson (fast-check)", () => {
  test("any JSON value: accepted or a 400 naming fields, nothing else thrown", () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), (body) => void outcome(body)), { numRuns: NUM_RUNS });
  });

  test("any JSON text parsed as the gateway does (JSON.parse): accepted or a 400", () => {
    fc.assert(fc.property(fc.json({ maxDepth: 6 }), (text) => void outcome(JSON.parse(text))), { numRuns: NUM_RUNS });
  });

  test("a valid report with one part replaced by any JSON: accepted or a 400", () => {
    fc.assert(fc.property(nearMiss, (body) => void outcome(body)), { numRuns: NUM_RUNS });
  });

  test("every valid report is accepted and comes back as sent (metadata within its limits, defaults filled)", () => {
    fc.assert(
      fc.property(validReport, (report) => {
        const sent = structuredClone(report);
        const parsed = parseCollectRequest(report);
        assert.equal(parsed.libraryVersion, sent.libraryVersion);
        assert.deepEqual(
          parsed.events,
          sent.events.map((e) => ({ documentId: e.documentId, documentCreatedAt: e.documentCreatedAt, openedAt: e.timestamp })),
          "the day counted is the day sent",
        );
        const bounded = boundMetadata(sent.metadata);
        assert.deepEqual(parsed.metadata, bounded.metadata ?? {});
        assert.deepEqual(parsed.metadataDropped, bounded.dropped);
        assert.equal(parsed.hostname, sent.browserInfo?.hostname ?? "");
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("a timestamp on a day that does not exist is refused, not rolled over to the next month", () => {
    const daysIn = (year: number, month: number) => {
      const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
      return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
    };
    const impossible = fc
      .tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 29, max: 31 }))
      .filter(([year, month, day]) => day > daysIn(year, month));
    fc.assert(
      fc.property(impossible, ([year, month, day]) => {
        const timestamp = `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${day}T12:00:00.000Z`;
        assert.equal(outcome({ libraryVersion: "1", events: [{ timestamp, documentId: "HASH-1" }] }), "refused", timestamp);
      }),
      { numRuns: 100 },
    );
  });
});
