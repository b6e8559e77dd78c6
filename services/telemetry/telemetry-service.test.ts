import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { CollectRequest, type DeepPartial } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import { rejection } from "../../test/support/service-errors.js";
import type { UsageIntake } from "./intake/usage-intake.js";
import { EmbeddedLicenseKeyStore } from "./license-keys/embedded-license-key-store.js";
import { COMMUNITY_LICENSE_KEY } from "./license-keys/license-key.js";
import { usageReportFromCollectRequest } from "./intake/collect-request-check.js";
import { collectRequestOf } from "./telemetry-client.js";
import { TelemetryService } from "./telemetry-service.js";
import type { UsageReport } from "./usage-report.js";
import type { UsageRecord } from "./usage-record.js";
import { EmbeddedUsageStore } from "./usage/embedded-usage-store.js";

// TelemetryService as every transport reaches it, on the embedded (LMDB) stores, whose keys hold at
// most 1,978 bytes: whatever a caller sends as a license key or in a report is a VALIDATION_ERROR
// naming the field, or UNAUTHENTICATED for a well-formed key nobody registered, never the store's error.

const root = mkdtempSync(join(tmpdir(), "docservice-telemetry-service-"));
const licenseKeys = new EmbeddedLicenseKeyStore(join(root, "license-keys"));
const usageStore = new EmbeddedUsageStore(join(root, "usage"));
const accepted: UsageRecord[][] = [];
const intake = { accept: async (records: UsageRecord[]) => void accepted.push(records) } as UsageIntake;
const telemetry = new TelemetryService(intake, usageStore, licenseKeys);

after(async () => {
  await licenseKeys.close();
  await usageStore.close();
  rmSync(root, { recursive: true, force: true });
});

const report = (overrides: DeepPartial<CollectRequest> = {}) =>
  CollectRequest.fromPartial({ libraryVersion: "1.0.0", events: [{ timestamp: new Date("2026-11-21T09:30:00.000Z"), documentId: "HASH-00000001" }], ...overrides });

const fields = async (call: Promise<unknown>) => (await rejection(call, "VALIDATION_ERROR")).details?.map((d) => d.field);

/** Too long for LMDB (10 KB and 2,000 characters), too short, with a space, a control character, a non-ASCII letter. */
const MALFORMED_KEYS = ["k".repeat(10_000), "k".repeat(2000), "k".repeat(129), "short", "lic with space", "lic_\u0000_nul", "lic_caf\u00e9_key"];

describe("TelemetryService: license keys are checked before any store sees them", () => {
  test("collect: a malformed key is a VALIDATION_ERROR naming licenseKey; a well-formed unknown one UNAUTHENTICATED", async () => {
    for (const licenseKey of MALFORMED_KEYS) assert.deepEqual(await fields(telemetry.collect(report({ licenseKey }))), ["licenseKey"], licenseKey.slice(0, 20));
    await rejection(telemetry.collect(report({ licenseKey: `lic_${"u".repeat(124)}` })), "UNAUTHENTICATED");
    assert.equal(accepted.length, 0);
  });

  test("collect: no key is the community key, which is always accepted", async () => {
    assert.deepEqual(await telemetry.collect(report()), { accepted: 1, metadataDropped: [] });
    assert.deepEqual(await telemetry.collect(report({ licenseKey: COMMUNITY_LICENSE_KEY })), { accepted: 1, metadataDropped: [] });
    assert.deepEqual(accepted.map((records) => records[0].licenseKey), [COMMUNITY_LICENSE_KEY, COMMUNITY_LICENSE_KEY]);
  });

  test("getUsage, addLicenseKey and removeLicenseKey: a malformed key is a VALIDATION_ERROR naming licenseKey", async () => {
    for (const licenseKey of MALFORMED_KEYS) {
      assert.deepEqual(await fields(telemetry.getUsage({ licenseKey, from: "2026-11-01", to: "2026-11-30", groupBy: "" })), ["licenseKey"]);
      assert.deepEqual(await fields(telemetry.addLicenseKey({ licenseKey })), ["licenseKey"]);
      assert.deepEqual(await fields(telemetry.removeLicenseKey({ licenseKey })), ["licenseKey"]);
    }
    assert.deepEqual(await fields(telemetry.getUsage({ licenseKey: "", from: "2026-11-01", to: "2026-11-30", groupBy: "" })), ["licenseKey"]);
    assert.deepEqual(await fields(telemetry.removeLicenseKey({ licenseKey: "" })), ["licenseKey"]);
  });

  test("keys of 8 and 128 characters are added, used, queried and removed", async () => {
    for (const licenseKey of ["lic_1234", `lic_${"m".repeat(124)}`]) {
      assert.equal((await telemetry.addLicenseKey({ licenseKey, customer: "Acme" })).key?.licenseKey, licenseKey);
      assert.equal((await telemetry.collect(report({ licenseKey }))).accepted, 1);
      assert.equal((await telemetry.getUsage({ licenseKey, from: "2026-11-01", to: "2026-11-30", groupBy: "" })).licenseKey, licenseKey);
      assert.deepEqual(await telemetry.removeLicenseKey({ licenseKey }), { removed: true });
    }
  });
});

describe("TelemetryService: a report from a Connect or gRPC caller is held to the JSON body's limits", () => {
  test("documentId: 1 to 128 characters without control characters", async () => {
    const event = (documentId: string) => ({ events: [{ timestamp: new Date(), documentId }] });
    assert.deepEqual(await fields(telemetry.collect(report(event("d".repeat(129))))), ["events[0].documentId"]);
    assert.deepEqual(await fields(telemetry.collect(report(event("d".repeat(100_000))))), ["events[0].documentId"]);
    assert.deepEqual(await fields(telemetry.collect(report(event("HASH-1\r\nX: y")))), ["events[0].documentId"]);
    assert.deepEqual(await fields(telemetry.collect(report(event("")))), ["events[0].documentId"]);
    assert.equal((await telemetry.collect(report(event(`ünïcode-${"d".repeat(120)}`)))).accepted, 1);
  });

  test("event times: from 2000-01-01 to a day past the service's clock, as the wire decodes them; outside is a VALIDATION_ERROR naming each event", async () => {
    const DAY = 24 * 3600 * 1000;
    const clock = Date.parse("2026-12-06T18:00:00.000Z");
    const service = new TelemetryService(intake, usageStore, licenseKeys, () => new Date(clock));
    const opens = (...times: Date[]) => report({ events: times.map((timestamp) => ({ timestamp, documentId: "HASH-00000001" })) });
    const wire = (request: CollectRequest) => CollectRequest.decode(CollectRequest.encode(request).finish());
    const refused = ["0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000Z", "1999-12-31T23:59:59.999Z"].map((t) => new Date(t));
    refused.push(new Date(clock + 7 * DAY), new Date(clock + DAY + 1));
    const error = await rejection(service.collect(wire(opens(new Date(clock), ...refused))), "VALIDATION_ERROR");
    const issue = "must be from 2000-01-01T00:00:00.000Z to a day past the server's clock (2026-12-07T18:00:00.000Z)";
    assert.deepEqual(error.details, refused.map((_, i) => ({ field: `events[${i + 1}].timestamp`, issue })));
    assert.deepEqual(await fields(service.collect(opens(new Date(Number.NaN)))), ["events[0].timestamp"]);

    accepted.length = 0;
    const times = [new Date(clock), new Date(clock + 5 * 60_000), new Date(clock + DAY), new Date("2000-01-01T00:00:00.000Z")];
    assert.equal((await service.collect(wire(opens(...times)))).accepted, 4);
    assert.deepEqual(accepted[0]!.map((record) => record.openedAt), times.map((t) => t.toISOString()));

    // by the real clock: now and a clock minutes ahead are accepted, a week ahead is not
    assert.equal((await telemetry.collect(opens(new Date(), new Date(Date.now() + 10 * 60_000)))).accepted, 2);
    assert.deepEqual(await fields(telemetry.collect(opens(new Date(Date.now() + 7 * DAY)))), ["events[0].timestamp"]);
  });

  test("texts and the number of events are bounded", async () => {
    const text = "x".repeat(5000);
    assert.deepEqual(await fields(telemetry.collect(report({ libraryVersion: text, browserInfo: { userAgent: text, currentUrl: text, hostname: text } }))), [
      "libraryVersion",
      "browserInfo.userAgent",
      "browserInfo.currentUrl",
      "browserInfo.hostname",
    ]);
    const events = Array.from({ length: 101 }, () => ({ timestamp: new Date(), documentId: "HASH-1", documentCreatedAt: text }));
    assert.deepEqual(await fields(telemetry.collect(report({ events }))), ["events"]);
    assert.deepEqual(await fields(telemetry.collect(report({ events: events.slice(0, 1) }))), ["events[0].documentCreatedAt"]);
  });
});

describe("TelemetryService: metadata from a Connect or gRPC caller is bounded by the client library's own definition", () => {
  test("any JSON object is accepted; what goes beyond the limits is left out and named, and the events are accepted", async () => {
    accepted.length = 0;
    const deep = { a: { b: { c: { d: "too deep" }, kept: 1 } } };
    const response = await telemetry.collect(report({ metadata: { tenant: "t1", user: null, deep, ["k".repeat(65)]: "v", pad: "x".repeat(5000) } }));
    assert.deepEqual(response, {
      accepted: 1,
      metadataDropped: [
        { path: "metadata.deep.a.b.c", reason: "too deep" },
        { path: `metadata.${"k".repeat(65)}`, reason: "key too long" },
        { path: "metadata.pad", reason: "too large" },
      ],
    });
    assert.deepEqual(accepted[0]![0]!.metadata, { tenant: "t1", user: null, deep: { a: { b: { kept: 1 } } } });
  });
});

describe("TelemetryService: a report is converted once, at the edge it came in at", () => {
  const checked: UsageReport = {
    licenseKey: COMMUNITY_LICENSE_KEY,
    libraryVersion: "1.0.0",
    hostname: "editor.example",
    metadata: { tenant: "a", user: null, ctx: { plan: "pro", seats: [1, 2] } },
    metadataDropped: [],
    events: [{ documentId: "HASH-00000001", documentCreatedAt: null, openedAt: "2026-11-21T09:30:00.000Z" }],
  };

  test("a CollectRequest becomes the UsageReport the records are made of: openedAt in UTC, an empty documentCreatedAt null", async () => {
    const request = report({ browserInfo: { hostname: "editor.example", userAgent: "UA" }, metadata: checked.metadata });
    assert.deepEqual(usageReportFromCollectRequest(request), checked);
    accepted.length = 0;
    await telemetry.collect(request);
    const [record] = accepted[0];
    assert.deepEqual({ ...record, eventId: undefined, receivedAt: undefined }, {
      eventId: undefined,
      receivedAt: undefined,
      licenseKey: COMMUNITY_LICENSE_KEY,
      documentId: "HASH-00000001",
      documentCreatedAt: null,
      openedAt: "2026-11-21T09:30:00.000Z",
      libraryVersion: "1.0.0",
      hostname: "editor.example",
      metadata: checked.metadata,
    });
  });

  test("in process, a checked report is accepted as it is, not through the gRPC edge again", async () => {
    // a documentId the gRPC edge would refuse: accepting it shows the report was not checked twice
    const unchecked = { ...checked, events: [{ ...checked.events[0]!, documentId: "d".repeat(200) }] };
    assert.deepEqual(await telemetry.accept(unchecked), { accepted: 1, metadataDropped: [] });
  });

  test("to a remote service, the report travels as a CollectRequest that its edge turns back into the same report", () => {
    const sent = collectRequestOf(checked);
    assert.deepEqual(usageReportFromCollectRequest(CollectRequest.decode(CollectRequest.encode(sent).finish())), checked);
  });
});
