// POST /v1/collect, GET /v1/usage and the license-key admin routes on the
// embedded platform (no Kafka, no Redis: the in-process pipeline and LMDB),
// including every bad-input rule and CORS; event times and first seen also
// over Connect.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { open as openLmdb } from "lmdb";
import { CollectRequest } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import { startPlatform, type Platform } from "../support/platform.js";
import { ADMIN_TOKEN, collect, report, today, usage } from "../support/usage-reports.js";

const COMMUNITY = "community-and-eval-agplv3";

describe("/v1/collect and /v1/usage (embedded pipeline)", () => {
  let platform: Platform;
  let base: string;
  const admin = (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) =>
    fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });

  before(async () => {
    platform = await startPlatform({ CONVERSION_POOL_SIZE: "1", DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN });
    base = platform.base;
  });
  after(() => platform?.stop());

  test("a report is counted at once: same document many times once, also under other metadata, other days apart", async () => {
    const key = ((await (await admin("POST", "/v1/admin/license-keys", { licenseKey: "lic_embedded_e2e", customer: "Acme" })).json()) as any).licenseKey;
    assert.equal(key, "lic_embedded_e2e");
    for (let i = 0; i < 3; i++) assert.deepEqual((await collect(base, report(["HASH-1"]), key)).body, { accepted: 1 });
    assert.equal((await collect(base, report(["HASH-1", "HASH-2"], { metadata: { tenant: "b" } }), key)).status, 202);
    assert.equal((await collect(base, report(["HASH-1"], { at: "2026-11-01T08:00:00.000Z" }), key)).status, 202);
    const day = today();
    const { status, body } = await usage(base, key, "2026-11-01", day);
    assert.equal(status, 200);
    assert.equal(body.documents, 2, JSON.stringify(body));
    assert.equal(body.opens, 6);
    // HASH-1 and HASH-2 are not content ids (HASH- and 8 hex digits)
    assert.deepEqual(body.byDay.find((d: any) => d.date === "2026-11-01"), { date: "2026-11-01", documents: 1, documentsWithoutContentId: 1, opens: 1 });
    if (day !== "2026-11-01") assert.deepEqual(body.byDay.find((d: any) => d.date === day), { date: day, documents: 2, documentsWithoutContentId: 2, opens: 5 });
  });

  test("a tenant's bill: groupBy=metadata.tenant in JSON and as CSV (a formula-like value defused), documents without content ids, bad groupBy refused", async () => {
    const key = ((await (await admin("POST", "/v1/admin/license-keys", { customer: "Grouped" })).json()) as any).licenseKey;
    const formula = "=HYPERLINK(\"http://evil.example\",\"x\")";
    assert.equal((await collect(base, report(["HASH-0000A001", "HASH-0000A002"], { metadata: { tenant: "acme", user: null } }), key)).status, 202);
    assert.equal((await collect(base, report(["HASH-0000A001"], { metadata: { tenant: formula, ctx: { plan: "pro" } } }), key)).status, 202);
    assert.equal((await collect(base, report(["invoice-17"], { metadata: { tenant: "acme" } }), key)).status, 202);
    const day = today();

    const grouped = await usage(base, key, day, day, ADMIN_TOKEN, "metadata.tenant");
    assert.equal(grouped.status, 200, JSON.stringify(grouped.body));
    assert.deepEqual([grouped.body.documents, grouped.body.documentsWithoutContentId, grouped.body.opens], [3, 1, 4]);
    const month = day.slice(0, 7);
    assert.deepEqual(grouped.body.grouped, {
      key: "tenant",
      groups: [
        { value: "acme", documents: 3, opens: 3, byMonth: [{ month, documents: 3, opens: 3 }] },
        { value: formula, documents: 1, opens: 1, byMonth: [{ month, documents: 1, opens: 1 }] },
      ],
    });

    const csv = await fetch(`${base}/v1/usage?licenseKey=${key}&from=${day}&to=${day}&groupBy=metadata.tenant`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, Accept: "text/csv" } });
    assert.equal(csv.status, 200);
    assert.equal(csv.headers.get("content-type"), "text/csv; charset=utf-8");
    const lines = (await csv.text()).split("\r\n");
    assert.deepEqual(lines, [
      "licenseKey,key,value,period,documents,opens",
      `${key},tenant,acme,${month},3,3`,
      `${key},tenant,acme,${day}..${day},3,3`,
      `${key},tenant,"'=HYPERLINK(""http://evil.example"",""x"")",${month},1,1`,
      `${key},tenant,"'=HYPERLINK(""http://evil.example"",""x"")",${day}..${day},1,1`,
      "",
    ]);
    const plain = await (await fetch(`${base}/v1/usage?licenseKey=${key}&from=${day}&to=${day}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, Accept: "text/csv" } })).text();
    assert.deepEqual(plain.split("\r\n"), [
      "licenseKey,period,documents,documentsWithoutContentId,opens",
      `${key},${day},3,1,4`,
      `${key},${month},3,1,4`,
      `${key},${day}..${day},3,1,4`,
      "",
    ]);

    for (const groupBy of ["tenant", "metadata.", `metadata.${"k".repeat(65)}`]) {
      const refused = await usage(base, key, day, day, ADMIN_TOKEN, groupBy);
      assert.deepEqual([refused.status, refused.body.details?.map((d: { field: string }) => d.field)], [400, ["groupBy"]], groupBy);
    }
    const tooLong = await usage(base, key, "2026-01-01", "2026-02-15", ADMIN_TOKEN, "metadata.tenant");
    assert.deepEqual([tooLong.status, tooLong.body.details?.map((d: { field: string }) => d.field)], [400, ["to"]]);
  });

  test("the community key is always accepted, also without the header; an unknown key is 401", async () => {
    assert.equal((await collect(base, report(["HASH-C"]))).status, 202);
    assert.equal((await collect(base, report(["HASH-C"]), COMMUNITY)).status, 202);
    const unknown = await collect(base, report(["HASH-C"]), "lic_not_registered");
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.code, "UNAUTHENTICATED");
  });

  test("a removed license key is refused", async () => {
    await admin("POST", "/v1/admin/license-keys", { licenseKey: "lic_to_remove", customer: "Gone" });
    assert.equal((await collect(base, report(["HASH-D"]), "lic_to_remove")).status, 202);
    const removed = await admin("DELETE", "/v1/admin/license-keys?licenseKey=lic_to_remove");
    assert.deepEqual(await removed.json(), { removed: true });
    assert.equal((await collect(base, report(["HASH-D"]), "lic_to_remove")).status, 401);
    const listed = (await (await admin("GET", "/v1/admin/license-keys")).json()) as any;
    assert.ok(!listed.keys.some((k: any) => k.licenseKey === "lic_to_remove"));
  });

  test("CORS: the preflight allows POST with Content-Type and X-License-Key from any origin, without credentials", async () => {
    const preflight = await fetch(`${base}/v1/collect`, {
      method: "OPTIONS",
      headers: { Origin: "https://editor.example.test", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-license-key" },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "*");
    assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /POST/);
    assert.match((preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase(), /content-type.*x-license-key/);
    assert.equal(preflight.headers.get("access-control-allow-credentials"), null);
    const accepted = await collect(base, report(["HASH-CORS"]));
    assert.equal(accepted.headers.get("access-control-allow-origin"), "*");
    const refused = await collect(base, "{");
    assert.equal(refused.headers.get("access-control-allow-origin"), "*", "errors are readable cross-origin too");
    assert.equal(accepted.headers.get("set-cookie"), null);
  });

  test("bad input: each rule answers its status with the field named", async () => {
    const fields = async (body: unknown) => {
      const result = await collect(base, body);
      assert.equal(result.status, 400, JSON.stringify(result.body));
      assert.equal(result.body.code, "VALIDATION_ERROR");
      return result.body.details.map((d: { field: string }) => d.field);
    };
    const event = { timestamp: "2026-11-21T09:00:00.000Z", documentId: "HASH-1", documentCreatedAt: null };
    assert.deepEqual(await fields({ superdocVersion: "1", events: [] }), ["events"]);
    assert.deepEqual(await fields({ superdocVersion: "1", events: Array.from({ length: 101 }, () => event) }), ["events"]);
    assert.deepEqual(await fields({ superdocVersion: "1", events: [{ ...event, timestamp: "2026-11-21T09:00:00Z" }] }), ["events[0].timestamp"]);
    assert.deepEqual(await fields({ superdocVersion: "1", events: [{ ...event, documentId: "x".repeat(129) }] }), ["events[0].documentId"]);
    assert.deepEqual(await fields({ superdocVersion: "1", events: [{ ...event, documentCreatedAt: 5 }] }), ["events[0].documentCreatedAt"]);
    assert.deepEqual(await fields({ libraryVersion: 2, events: [event] }), ["libraryVersion"]);
    assert.deepEqual(await fields({ events: [event] }), ["libraryVersion"]);
    assert.deepEqual(await fields({ superdocVersion: "1", browserInfo: { screenSize: { width: "wide" } }, events: [event] }), ["browserInfo.screenSize.width"]);
    assert.deepEqual(await fields([event]), ["body"]);
    // unknown fields are ignored; empty browser info (outside a browser) is fine
    const tolerant = await collect(base, { superdocVersion: "1", extra: true, browserInfo: { userAgent: "", currentUrl: "", hostname: "", screenSize: { width: 0, height: 0 } }, events: [{ ...event, documentCreatedAt: "2011-11-24T13:24:12.00Z", more: 1 }] });
    assert.equal(tolerant.status, 202, JSON.stringify(tolerant.body));

    const tooLarge = await collect(base, { superdocVersion: "1", metadata: { pad: "x".repeat(70_000) }, events: [event] });
    assert.equal(tooLarge.status, 413);
    const notJson = await fetch(`${base}/v1/collect`, { method: "POST", headers: { "Content-Type": "text/plain" }, body: "hi" });
    assert.equal(notJson.status, 415);
  });

  test("an event time before 2000 or more than a day ahead is a 400 naming the event, on /v1 and Connect; now and minutes ahead are counted", async () => {
    const key = ((await (await admin("POST", "/v1/admin/license-keys", { customer: "Clock" })).json()) as any).licenseKey;
    const DAY = 24 * 3600 * 1000;
    const at = (ms: number) => new Date(ms).toISOString();
    const refused = ["0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000Z", at(Date.now() + 7 * DAY)];
    const events = (...timestamps: string[]) => timestamps.map((timestamp, i) => ({ timestamp, documentId: `HASH-0000000${i}`, documentCreatedAt: null }));

    const v1 = await collect(base, { libraryVersion: "1", events: events(at(Date.now()), ...refused) }, key);
    assert.equal(v1.status, 400, JSON.stringify(v1.body));
    assert.equal(v1.body.code, "VALIDATION_ERROR");
    assert.deepEqual(v1.body.details.map((d: { field: string }) => d.field), refused.map((_, i) => `events[${i + 1}].timestamp`));
    assert.match(v1.body.details[0].issue, /^must be from 2000-01-01T00:00:00\.000Z to a day past the server's clock/);

    const connect = (timestamp: string) =>
      fetch(`${base}/docservice.v1.TelemetryService/Collect`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ licenseKey: key, libraryVersion: "1", events: [{ timestamp, documentId: "HASH-00000001" }] }),
      });
    for (const timestamp of refused) {
      const answer = await connect(timestamp);
      const text = await answer.text();
      assert.equal(answer.status, 400, `${timestamp}: ${text}`);
      assert.equal(JSON.parse(text).code, "invalid_argument");
      // Timestamp's JSON form has no year 0: protobuf's own decoding refuses it before the service sees it
      if (!timestamp.startsWith("0000")) assert.match(JSON.parse(text).message, /events\[0\]\.timestamp: must be from 2000-01-01/, timestamp);
    }
    // in Connect's binary form (as over gRPC) year 0 is a Timestamp like any other: the service's edge names it
    const binary = await fetch(`${base}/docservice.v1.TelemetryService/Collect`, {
      method: "POST",
      headers: { "Content-Type": "application/proto" },
      body: CollectRequest.encode(CollectRequest.fromPartial({ licenseKey: key, libraryVersion: "1", events: [{ timestamp: new Date(refused[0]!), documentId: "HASH-00000001" }] })).finish(),
    });
    const binaryError = (await binary.json()) as { code: string; message: string };
    assert.deepEqual([binary.status, binaryError.code], [400, "invalid_argument"]);
    assert.match(binaryError.message, /events\[0\]\.timestamp: must be from 2000-01-01/);
    assert.equal((await usage(base, key, today(), today())).body.opens, 0, "nothing refused was counted");

    assert.equal((await collect(base, { libraryVersion: "1", events: events(at(Date.now()), at(Date.now() + 5 * 60_000)) }, key)).status, 202);
    for (const timestamp of [at(Date.now()), at(Date.now() + 5 * 60_000)]) {
      const answer = await connect(timestamp);
      assert.equal(answer.status, 200, await answer.text());
    }
    const counted = await usage(base, key, today(), at(Date.now() + 5 * 60_000).slice(0, 10));
    assert.equal(counted.body.opens, 4, JSON.stringify(counted.body));
  });

  test("a first seen that no Timestamp holds, stored before event times were bounded, is left out: GetUsage answers 200 over Connect and /v1", async () => {
    const key = ((await (await admin("POST", "/v1/admin/license-keys", { customer: "Year zero" })).json()) as any).licenseKey;
    assert.equal((await collect(base, report(["HASH-0000Z001"]), key)).status, 202);
    // what /v1/collect accepted before: an open in year 0, written into the platform's store (LMDB, opened by both processes)
    const store = openLmdb({ path: join(platform.dataDir, "usage"), compression: false });
    try {
      const span = store.get(`span:${encodeURIComponent(key)}`) as { first: string; last: string };
      await store.put(`span:${encodeURIComponent(key)}`, { first: "0000-01-01T00:00:00.000Z", last: span.last });
    } finally {
      await store.close();
    }
    for (const [from, to] of [[today(), today()], ["2020-01-01", "2020-01-31"]]) {
      const answer = await fetch(`${base}/docservice.v1.TelemetryService/GetUsage`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ licenseKey: key, from, to }),
      });
      const body = (await answer.json()) as any;
      assert.equal(answer.status, 200, JSON.stringify(body));
      assert.equal(body.firstSeen, undefined);
      assert.equal(new Date(body.lastSeen).toISOString().slice(0, 10), today());
      const v1 = await usage(base, key, from, to);
      assert.equal(v1.status, 200);
      assert.deepEqual([v1.body.firstSeen, v1.body.lastSeen?.slice(0, 10)], [undefined, today()]);
    }
  });

  test("a license key no store could hold is a 400 naming where it came from, wherever it is sent", async () => {
    const details = async (response: { status: number; body: any }) => {
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.equal(response.body.code, "VALIDATION_ERROR");
      return response.body.details.map((d: { field: string }) => d.field);
    };
    for (const licenseKey of ["k".repeat(10_000), "short", "lic_caf\u00e9_key"]) {
      assert.deepEqual(await details(await collect(base, report(["HASH-E"]), licenseKey)), ["X-License-Key"]);
    }
    const long = "k".repeat(2000);
    assert.deepEqual(await details(await usage(base, long, today(), today())), ["licenseKey"]);
    const removed = await admin("DELETE", `/v1/admin/license-keys?licenseKey=${long}`);
    assert.deepEqual(await details({ status: removed.status, body: await removed.json() }), ["licenseKey"]);
    const added = await admin("POST", "/v1/admin/license-keys", { licenseKey: long });
    assert.deepEqual(await details({ status: added.status, body: await added.json() }), ["licenseKey"]);
  });

  test("/v1/usage and the admin routes need the admin token; bad ranges are 400s", async () => {
    assert.equal((await usage(base, COMMUNITY, today(), today(), "wrong-token-0000000")).status, 401);
    assert.equal((await admin("GET", "/v1/admin/license-keys", undefined, "wrong-token-0000000")).status, 401);
    const backwards = await usage(base, COMMUNITY, "2026-11-21", "2026-11-01");
    assert.equal(backwards.status, 400);
    assert.equal(backwards.body.details[0].field, "to");
    assert.equal((await usage(base, COMMUNITY, "2026-02-30", "2026-03-01")).status, 400);
    assert.equal((await usage(base, "", today(), today())).status, 400);
    const community = await usage(base, COMMUNITY, today(), today());
    assert.equal(community.status, 200);
    assert.ok(community.body.documents >= 1);
  });
});
