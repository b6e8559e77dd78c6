import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import {
  COMMUNITY_LICENSE_KEY,
  computeDocumentId,
  createUsageTracker,
  DEFAULT_ENDPOINT,
  KEEPALIVE_MAX_BYTES,
  LIBRARY_VERSION,
  type CollectRequest,
  type FetchLike,
  type TelemetryDebugEvent,
  METADATA_LIMITS,
} from "./index.js";
import { REPORT_LIMITS } from "./report-limits.js";
import { deadEndpoint, pause, startCollector, type Collector, type Respond } from "./test/collector.js";
import { corpusDocx } from "./test/docx.js";

const DOCX = "1-page.docx";
const DOCX_ID = "HASH-00C79232";
/** An absolute endpoint, for reports from outside a page. */
const ENDPOINT = "https://collect.example.com/v1/collect";
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * Runs `body` and fails the test if meanwhile anything was written to the
 * console or a rejected promise was left unhandled.
 */
async function quietly(t: TestContext, body: () => Promise<void> | void): Promise<void> {
  const methods = (["log", "info", "warn", "error", "debug"] as const).map((name) => t.mock.method(console, name));
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on("unhandledRejection", onRejection);
  try {
    await body();
    await pause(50);
  } finally {
    process.off("unhandledRejection", onRejection);
  }
  assert.deepEqual(rejections, [], "no unhandled rejection");
  for (const method of methods) assert.equal(method.mock.callCount(), 0, "nothing is logged");
}

/** `quietly`, against a real collector that is closed afterwards. */
function withCollector(t: TestContext, body: (collector: Collector) => Promise<void>, respond?: Respond): Promise<void> {
  return quietly(t, async () => {
    const collector = await startCollector(respond);
    try {
      await body(collector);
      // judged by the platform's own rules: every report the client sent is one the platform accepts
      if (!respond) assert.deepEqual(collector.requests.map((request) => request.status), collector.requests.map(() => 202), collector.requests.map((r) => r.body).join("\n"));
    } finally {
      await collector.close();
    }
  });
}

/** A fetch that records its calls and answers 202. */
function recordingFetch(): { fetch: FetchLike; calls: Array<{ url: string; init: CollectRequest }> } {
  const calls: Array<{ url: string; init: CollectRequest }> = [];
  return { calls, fetch: (url, init) => (calls.push({ url, init }), Promise.resolve(new Response(null, { status: 202 }))) };
}

const reportOf = (call: { init: CollectRequest } | undefined) => JSON.parse(call!.init.body);

describe("createUsageTracker", () => {
  test("one open sends one report: exact JSON body and headers, received by a real HTTP server", (t) =>
    withCollector(t, async (collector) => {
      const tracker = createUsageTracker({
        licenseKey: "key-123",
        telemetry: { endpoint: collector.endpoint, metadata: { customerId: "c-1", seats: 5, trial: false, region: null } },
      });
      const docx = corpusDocx(DOCX);
      const identity = tracker.trackOpen(docx);
      assert.deepEqual(identity, computeDocumentId(docx));
      await collector.waitFor(1);
      await pause(100);
      assert.equal(collector.requests.length, 1, "exactly one request");

      const [request] = collector.requests;
      assert.equal(request!.method, "POST");
      assert.equal(request!.url, "/v1/collect");
      assert.equal(request!.headers["content-type"], "application/json");
      assert.equal(request!.headers["x-license-key"], "key-123");
      assert.equal(request!.headers.cookie, undefined);
      assert.equal(request!.headers.authorization, undefined);

      const body = JSON.parse(request!.body);
      assert.deepEqual(Object.keys(body), ["libraryVersion", "browserInfo", "metadata", "events"]);
      assert.match(body.events[0].timestamp, ISO_MS);
      assert.ok(Math.abs(Date.parse(body.events[0].timestamp) - Date.now()) < 10_000);
      assert.deepEqual(body, {
        libraryVersion: LIBRARY_VERSION,
        browserInfo: { userAgent: "", currentUrl: "", hostname: "", screenSize: { width: 0, height: 0 } },
        metadata: { customerId: "c-1", seats: 5, trial: false, region: null },
        events: [{ timestamp: body.events[0].timestamp, documentId: DOCX_ID, documentCreatedAt: "2025-02-28T03:58:00Z" }],
      });
    }));

  test("the same file opened twice: two reports with the same documentId", (t) =>
    withCollector(t, async (collector) => {
      const tracker = createUsageTracker({ telemetry: { endpoint: collector.endpoint } });
      const first = tracker.trackOpen(corpusDocx("ComplexNumberedLists.docx"));
      const second = tracker.trackOpen(corpusDocx("ComplexNumberedLists.docx"));
      assert.equal(first!.documentId, second!.documentId);
      await collector.waitFor(2);
      const reports = collector.requests.map((request) => JSON.parse(request.body));
      assert.deepEqual(
        reports.map((report) => report.events[0].documentId),
        [first!.documentId, first!.documentId],
      );
      assert.equal(reports[0].events[0].documentCreatedAt, "2016-11-03T17:41:00Z");
      assert.ok(!("metadata" in reports[0]), "no metadata configured, none sent");
    }));

  test("enabled: false makes no request at all, and still returns the id", (t) =>
    withCollector(t, async (collector) => {
      const { fetch, calls } = recordingFetch();
      const global = t.mock.method(globalThis, "fetch");
      for (const tracker of [
        createUsageTracker({ telemetry: { enabled: false, endpoint: collector.endpoint }, fetch }),
        createUsageTracker({ telemetry: { enabled: false, endpoint: collector.endpoint } }),
      ]) {
        assert.equal(tracker.enabled, false);
        assert.equal(tracker.trackOpen(corpusDocx(DOCX))!.documentId, DOCX_ID);
      }
      await pause(200);
      assert.equal(calls.length, 0);
      assert.equal(global.mock.callCount(), 0);
      assert.equal(collector.requests.length, 0);
    }));

  test("defaults: enabled, community license key, /v1/collect on the page's own origin (nothing outside a page), keepalive, credentials omitted", (t) =>
    quietly(t, () => {
      const { fetch, calls } = recordingFetch();
      const tracker = createUsageTracker({ fetch });
      assert.equal(tracker.enabled, true);
      assert.equal(tracker.licenseKey, COMMUNITY_LICENSE_KEY);
      assert.equal(tracker.endpoint, DEFAULT_ENDPOINT);
      assert.equal(DEFAULT_ENDPOINT, "/v1/collect");
      // no page, so no origin to send to: never the machine the code runs on
      assert.equal(tracker.trackOpen({ documentId: "HASH-0000ABCD", documentCreatedAt: null })!.documentId, "HASH-0000ABCD");
      assert.equal(calls.length, 0);

      (globalThis as { window?: unknown }).window = { location: { origin: "https://app.example.com", pathname: "/editor", hostname: "app.example.com" } };
      try {
        tracker.trackOpen({ documentId: "HASH-0000ABCD", documentCreatedAt: null });
      } finally {
        delete (globalThis as { window?: unknown }).window;
      }
      assert.equal(calls.length, 1);
      const [{ url, init }] = calls as [{ url: string; init: CollectRequest }];
      assert.equal(url, "https://app.example.com/v1/collect");
      assert.equal(init.method, "POST");
      assert.equal(init.credentials, "omit");
      assert.equal(init.mode, "cors");
      assert.equal(init.keepalive, true);
      assert.deepEqual(init.headers, { "Content-Type": "application/json", "X-License-Key": "community-and-eval-agplv3" });
      assert.deepEqual(reportOf(calls[0]).events[0].documentId, "HASH-0000ABCD");
    }));

  test("a clock that dates the open before REPORT_LIMITS.eventTime.earliest sends nothing (the platform refuses such a time), and the id is still returned", (t) =>
    withCollector(t, async (collector) => {
      const tracker = createUsageTracker({ telemetry: { endpoint: collector.endpoint } });
      const earliest = Date.parse(REPORT_LIMITS.eventTime.earliest);
      const clock = t.mock.method(Date, "now", () => 0);
      for (const now of [Date.parse("0000-01-01T00:00:00.000Z"), 0, earliest - 1]) {
        clock.mock.mockImplementation(() => now);
        assert.equal(tracker.trackOpen({ documentId: "HASH-00000001", documentCreatedAt: null })!.documentId, "HASH-00000001");
      }
      clock.mock.mockImplementation(() => earliest);
      tracker.trackOpen({ documentId: "HASH-00000002", documentCreatedAt: null });
      clock.mock.restore();
      await collector.waitFor(1);
      await pause(100);
      // the collector judges by the platform's own rules (withCollector), by the real clock: the earliest time is accepted
      assert.deepEqual(
        collector.requests.map((request) => JSON.parse(request.body).events[0]),
        [{ timestamp: REPORT_LIMITS.eventTime.earliest, documentId: "HASH-00000002", documentCreatedAt: null }],
      );
    }));

  test("license key: the root key wins over the deprecated telemetry.licenseKey", (t) =>
    withCollector(t, async (collector) => {
      const cases: Array<[Parameters<typeof createUsageTracker>[0], string]> = [
        [{ licenseKey: "root", telemetry: { licenseKey: "deprecated" } }, "root"],
        [{ telemetry: { licenseKey: "deprecated" } }, "deprecated"],
        [{ licenseKey: "root" }, "root"],
        [{ licenseKey: "", telemetry: { licenseKey: "deprecated" } }, "deprecated"],
        [{}, COMMUNITY_LICENSE_KEY],
      ];
      for (const [options, expected] of cases) {
        const tracker = createUsageTracker({ ...options, telemetry: { ...options?.telemetry, endpoint: collector.endpoint } });
        assert.equal(tracker.licenseKey, expected);
        tracker.trackOpen({ documentId: "HASH-00000001", documentCreatedAt: null });
      }
      await collector.waitFor(cases.length);
      const received = collector.requests.map((request) => request.headers["x-license-key"]);
      assert.deepEqual(received.sort(), cases.map(([, expected]) => expected).sort());
    }));

  test("never blocks: trackOpen returns at once while the collector has not answered", (t) =>
    withCollector(
      t,
      async (collector) => {
        const tracker = createUsageTracker({ telemetry: { endpoint: collector.endpoint } });
        const result = tracker.trackOpen(corpusDocx(DOCX));
        assert.equal(typeof (result as { then?: unknown } | null)?.then, "undefined", "not a promise");
        assert.equal(result!.documentId, DOCX_ID);
        assert.equal(collector.requests.length, 0, "returned before the request arrived");
        await collector.waitFor(1);
      },
      () => {
        // never answers
      },
    ));

  test("never retries: a 500 answer is left alone", (t) =>
    withCollector(
      t,
      async (collector) => {
        createUsageTracker({ telemetry: { endpoint: collector.endpoint } }).trackOpen(corpusDocx(DOCX));
        await collector.waitFor(1);
        await pause(300);
        assert.equal(collector.requests.length, 1);
      },
      (_request, response) => response.writeHead(500).end("boom"),
    ));

  test("never throws: collector down, fetch throwing, rejecting or missing, bad endpoint", (t) =>
    quietly(t, async () => {
      const docx = corpusDocx(DOCX);
      const throwing: FetchLike = () => {
        throw new TypeError("synchronous failure");
      };
      const rejecting: FetchLike = () => Promise.reject(new Error("network down"));
      const trackers = [
        createUsageTracker({ telemetry: { endpoint: await deadEndpoint() } }),
        createUsageTracker({ fetch: throwing }),
        createUsageTracker({ fetch: rejecting }),
        createUsageTracker({ telemetry: { endpoint: "not a url" } }),
        createUsageTracker({ telemetry: { endpoint: "/v1/collect" } }),
      ];
      for (const tracker of trackers) assert.equal(tracker.trackOpen(docx)!.documentId, DOCX_ID);

      const saved = globalThis.fetch;
      try {
        delete (globalThis as { fetch?: unknown }).fetch;
        assert.equal(typeof globalThis.fetch, "undefined");
        assert.equal(createUsageTracker().trackOpen(docx)!.documentId, DOCX_ID);
      } finally {
        globalThis.fetch = saved;
      }
      await pause(300);
    }));

  test("input that is not a document returns null and sends nothing", (t) =>
    quietly(t, () => {
      const { fetch, calls } = recordingFetch();
      const tracker = createUsageTracker({ fetch, telemetry: { endpoint: ENDPOINT } });
      for (const input of [undefined, null, "file.docx", {}, { documentId: "" }, { documentId: 42 }]) {
        assert.equal(tracker.trackOpen(input as never), null);
      }
      assert.equal(calls.length, 0);
      // Not a DOCX, but bytes: the byte hash is reported.
      const bytes = new TextEncoder().encode("plain text");
      assert.equal(tracker.trackOpen(bytes)!.documentId, computeDocumentId(bytes).documentId);
      assert.equal(calls.length, 1);
    }));

  test("metadata is any JSON: nulls, nested objects and arrays are sent as configured, and the platform accepts them", (t) =>
    withCollector(t, async (collector) => {
      const metadata = { tenant: "t1", user: null, ctx: { plan: "pro", seats: 5, trial: false, tags: ["a", "b"] } };
      createUsageTracker({ telemetry: { endpoint: collector.endpoint, metadata } }).trackOpen({ documentId: "HASH-00000002", documentCreatedAt: null });
      await collector.waitFor(1);
      assert.deepEqual(JSON.parse(collector.requests[0]!.body).metadata, metadata);
    }));

  test("what goes beyond the metadata's limits or is not JSON is left out, the report still goes, and the debug hook hears what was left out", (t) =>
    withCollector(t, async (collector) => {
      const heard: TelemetryDebugEvent[] = [];
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      const metadata = {
        tenant: "t1",
        at: new Date("2026-01-02T03:04:05.000Z"),
        deep: { a: { b: { c: { d: 1 } } } },
        huge: "x".repeat(METADATA_LIMITS.maxBytes),
        cycle,
        fn: () => 1,
        nan: Number.NaN,
      };
      createUsageTracker({ telemetry: { endpoint: collector.endpoint, metadata, debug: (event) => heard.push(event) } }).trackOpen({ documentId: "HASH-00000002", documentCreatedAt: null });
      await collector.waitFor(1);
      assert.deepEqual(JSON.parse(collector.requests[0]!.body).metadata, { tenant: "t1", at: "2026-01-02T03:04:05.000Z", deep: { a: { b: {} } }, nan: null });
      assert.deepEqual(heard, [
        {
          type: "metadata-dropped",
          dropped: [
            { path: "metadata.cycle", reason: "not JSON" },
            { path: "metadata.fn", reason: "not JSON" },
            { path: "metadata.deep.a.b.c", reason: "too deep" },
            { path: "metadata.huge", reason: "too large" },
          ],
        },
      ]);
      assert.equal(JSON.parse(collector.requests[0]!.body).metadataDropped, undefined);
    }));

  test("a debug hook that throws stops nothing, and without one nothing is logged", (t) =>
    quietly(t, () => {
      const { fetch, calls } = recordingFetch();
      const debug = () => {
        throw new Error("hook failed");
      };
      createUsageTracker({ fetch, telemetry: { endpoint: ENDPOINT, metadata: { f: () => 1 }, debug } }).trackOpen({ documentId: "HASH-00000002", documentCreatedAt: null });
      createUsageTracker({ fetch, telemetry: { endpoint: ENDPOINT, metadata: { f: () => 1 } } }).trackOpen({ documentId: "HASH-00000002", documentCreatedAt: null });
      assert.equal(calls.length, 2);
      assert.ok(!("metadata" in reportOf(calls[0])));
    }));

  test("in a browser, browserInfo carries the user agent, the page's address without query or fragment, and the screen", (t) =>
    quietly(t, () => {
      const { fetch, calls } = recordingFetch();
      (globalThis as { window?: unknown }).window = {
        navigator: { userAgent: "Mozilla/5.0 Test" },
        location: {
          href: "https://app.example.com/docs/contract?token=secret#page=2",
          origin: "https://app.example.com",
          pathname: "/docs/contract",
          hostname: "app.example.com",
        },
        screen: { width: 1920, height: 1080 },
      };
      try {
        createUsageTracker({ fetch, telemetry: { endpoint: ENDPOINT } }).trackOpen({ documentId: "HASH-00000003", documentCreatedAt: "2020-01-01T00:00:00Z" });
      } finally {
        delete (globalThis as { window?: unknown }).window;
      }
      assert.deepEqual(reportOf(calls[0]).browserInfo, {
        userAgent: "Mozilla/5.0 Test",
        currentUrl: "https://app.example.com/docs/contract",
        hostname: "app.example.com",
        screenSize: { width: 1920, height: 1080 },
      });
    }));

  test("every text of a report is cut to the platform's limits; a report too heavy for a page's keepalive budget still goes, without keepalive", (t) =>
    withCollector(t, async (collector) => {
      // control characters take 6 bytes each in JSON: the heaviest texts a page could give
      const heavy = "\u0001".repeat(10_000);
      const page = (pathname: string, userAgent: string, hostname: string) => ({
        navigator: { userAgent },
        location: { origin: "https://app.example.com", pathname, hostname },
        screen: { width: 1e9, height: -5 },
      });
      const tracker = createUsageTracker({ telemetry: { endpoint: collector.endpoint, metadata: { note: "\u0001".repeat(330) } } });
      for (const window of [page(`/${heavy}`, heavy, heavy), page("/docs", "Mozilla/5.0", "app.example.com")]) {
        (globalThis as { window?: unknown }).window = window;
        try {
          tracker.trackOpen({ documentId: "HASH-00000004", documentCreatedAt: null });
        } finally {
          delete (globalThis as { window?: unknown }).window;
        }
      }
      await collector.waitFor(2);
      const [heavyReport, lightReport] = collector.requests.map((request) => JSON.parse(request.body));
      assert.deepEqual(
        [heavyReport.browserInfo.userAgent.length, heavyReport.browserInfo.currentUrl.length, heavyReport.browserInfo.hostname.length],
        [REPORT_LIMITS.maxTextChars.userAgent, REPORT_LIMITS.maxTextChars.currentUrl, REPORT_LIMITS.maxTextChars.hostname],
      );
      assert.deepEqual(heavyReport.browserInfo.screenSize, { width: REPORT_LIMITS.maxScreenPixels, height: 0 });
      assert.equal(lightReport.browserInfo.userAgent, "Mozilla/5.0");
      assert.ok(collector.requests[0]!.body.length > KEEPALIVE_MAX_BYTES);
    }));

  test("reports go with keepalive, so one sent as the page closes is not dropped", (t) =>
    quietly(t, () => {
      const { fetch, calls } = recordingFetch();
      createUsageTracker({ fetch, telemetry: { endpoint: ENDPOINT, metadata: { note: "x".repeat(1000) } } }).trackOpen({ documentId: "HASH-00000004", documentCreatedAt: null });
      assert.equal(calls[0]!.init.keepalive, true);
    }));
});
