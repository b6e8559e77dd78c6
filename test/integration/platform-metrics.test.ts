// What an operator reads on /metrics of one embedded process, after real
// work: a DOCX signed (converted, then signed), conversions that succeed and
// fail, usage reported and counted, and the saturation gauges at rest.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { makeDocx } from "../support/docx-fixtures.js";
import { exportedMetricNames, sampleValues } from "../support/metrics-text.js";
import { monitoringQueries } from "../support/monitoring-queries.js";
import { promqlReferences } from "../support/promql-metric-names.js";
import { convertFile, startPlatform, type Platform } from "../support/platform.js";
import { postJson, signBody } from "../support/sign-requests.js";
import { collect, report } from "../support/usage-reports.js";
import { waitFor } from "../support/wait.js";

describe("/metrics of the platform", () => {
  let platform: Platform;
  let metrics = "";
  const scrape = async () => (metrics = await (await fetch(`${platform.base}/metrics`)).text());
  const value = (name: string, labels: Record<string, string> = {}) => sampleValues(metrics, name, labels)[0];

  before(async () => {
    platform = await startPlatform({ SIGNING_WORKERS: "2", SIGNING_QUEUE_LIMIT: "7", DOCSERVICE_MEMORY_BUDGET_MB: "64" });
    await waitFor(async () => (await fetch(`${platform.base}/v1/health`)).status === 200, { what: "every backend up", timeoutMs: 60_000 });
  });
  after(() => platform?.stop());

  test("a signed DOCX counts a conversion and a document signed at its level", async () => {
    const signed = await postJson(platform.base, "/v1/sign", signBody(makeDocx(["Counted once."])), platform.apiKey);
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    await scrape();
    assert.equal(value("docservice_signing_documents_signed_total", { level: "B-B" }), 1);
    assert.equal(value("docservice_conversions_total", { source: "docx", target: "pdf", outcome: "converted" }), 1);
    assert.equal(value("docservice_conversion_duration_seconds_count", { target: "pdf" }), 1);
  });

  test("conversions are counted per target and outcome, failures by their error code", async () => {
    assert.equal((await convertFile(platform, makeDocx(["To PDF/A."]), "a.docx", "docx", { pdfa: "2b" })).status, 200);
    assert.equal((await convertFile(platform, Buffer.from("PK\u0003\u0004 not a zip"), "broken.docx", "docx")).status, 422);
    await scrape();
    assert.equal(value("docservice_conversions_total", { source: "docx", target: "pdf/a-2b", outcome: "converted" }), 1);
    assert.equal(value("docservice_conversions_total", { source: "docx", target: "pdf", outcome: "unprocessable_document" }), 1);
  });

  test("usage events accepted are counted, and applied once in the store", async () => {
    assert.equal((await collect(platform.base, report(["HASH-0000000A", "HASH-0000000B", "HASH-0000000C"]))).status, 202);
    await waitFor(async () => (await scrape(), value("docservice_usage_events_applied_total") === 3), { what: "3 events applied" });
    assert.equal(value("docservice_usage_events_accepted_total"), 3);
    assert.equal(value("docservice_usage_spool_bytes"), 0);
  });

  test("saturation at rest: workers idle against their pool, bodies against the budget, the open connection", async () => {
    await scrape();
    assert.equal(value("docservice_signing_workers"), 2);
    assert.equal(value("docservice_signing_workers_busy"), 0);
    assert.equal(value("docservice_signing_tasks_in_flight"), 0);
    assert.equal(value("docservice_signing_tasks_limit"), 7);
    assert.equal(value("docservice_conversion_waiting"), 0);
    assert.equal(value("docservice_conversion_in_flight"), 0);
    assert.equal(value("docservice_http_body_bytes_budget"), 64 * 2 ** 20);
    assert.equal(value("docservice_http_body_bytes_in_flight"), 0);
    assert.ok(value("docservice_http_connections_open")! >= 1);
  });

  test("the signing certificate's expiry is a time in the future", async () => {
    await scrape();
    const expiry = value("docservice_certificate_expiry_timestamp_seconds", { certificate: "signing" });
    assert.ok(expiry! > Date.now() / 1000, `expiry ${expiry}`);
  });

  test("every metric of the platform is declared with its help and type, named docservice_* (besides Node's own)", async () => {
    const names = exportedMetricNames(await scrape());
    const ours = [...names].filter((name) => name.startsWith("docservice_"));
    assert.ok(ours.length >= 25, ours.join(", "));
    assert.deepEqual([...names].filter((name) => !/^(docservice|process|nodejs)_/.test(name)), []);
  });

  test("every metric the chart's alerts and dashboard query is one the platform exports", async () => {
    const exported = exportedMetricNames(await scrape());
    for (const { where, expr } of monitoringQueries()) {
      for (const name of promqlReferences(expr).names) assert.ok(exported.has(name), `${where} queries ${name}, which the platform does not export`);
    }
  });

  test("the metrics reference (docs/operations/monitoring.md) describes exactly the docservice_* metrics the platform exports", async () => {
    const declared = new Set([...(await scrape()).matchAll(/^# TYPE (docservice_\S+) /gm)].map((m) => m[1]));
    const documented = new Set([...readFileSync("docs/operations/monitoring.md", "utf8").matchAll(/^\| `(docservice_[a-z_]+)` \|/gm)].map((m) => m[1]));
    assert.deepEqual([...declared].sort(), [...documented].sort());
  });
});
