// The metadata contract as a front end meets it: the packed @docservice/telemetry
// tarball, installed in an empty project and bundled by esbuild from there, runs
// in Chromium on one origin and reports one DOCX open per kind of metadata an
// integrator may configure to the real /v1/collect of a running platform on
// another. Every report must be accepted with nothing more left out by the
// platform than the client already left out (both apply one definition), the
// debug hook must hear what was left out, and /v1/usage must count every open
// of the one file as one document.
//
// The reference editor's own reports are sent from the same page as DESIGN.md
// records them, not by the editor: superdoc 2.11.0 opens a document only
// through @superdoc/docx-engine, a proprietary dependency whose license forbids
// using it to validate or assist a competing product (its sections 1.4, 1.6
// and 3(e)-(f)), so it is neither installed nor run here.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { computeDocumentId, COMMUNITY_LICENSE_KEY } from "../../clients/telemetry/index.js";
import { launchBrowser } from "../support/browser.js";
import { bundleForBrowser, bundleWithRollup, serveStatic, type StaticSite } from "../support/browser-page.js";
import { corpusFile } from "../support/corpus.js";
import { installPackedTelemetryClient, telemetryManifest, type PackedPackage } from "../support/packed-package.js";
import { startPlatform, type Platform } from "../support/platform.js";
import { ADMIN_TOKEN, collect, registerLicenseKey, usage, usageWhen } from "../support/usage-reports.js";

const DOCX = "1-page.docx";
/** A corpus file without a GUID of its own. */
const UNSTAMPED = "ComplexNumberedLists.docx";

/**
 * `window.reportEveryKind(collector)` makes one tracker per kind of metadata and
 * opens the document with each; it returns what each debug hook heard.
 * The kinds JSON cannot carry (a Date, a function, a cycle, a BigInt) are why
 * they are built here, in the page, and not passed in.
 */
const PAGE = `<!doctype html>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>telemetry contract</title>
<script type="module">
  import { createUsageTracker, openDocumentSession } from "/telemetry.js";
  window.reportEveryKind = async (collector) => {
    const bytes = new Uint8Array(await (await fetch("/document.docx")).arrayBuffer());
    const cycle = { name: "c" };
    cycle.self = cycle;
    const kinds = {
      none: undefined,
      empty: {},
      flat: { customerId: "c-1", seats: 5, trial: false, region: null },
      referenceEditor: { tenant: "t1", user: null, ctx: { plan: "pro" } },
      nested: { a: { b: { c: "three levels" } }, list: [1, "two", { three: 3 }, [4]] },
      unicode: { "clé": "värde", "名前": "文書", emoji: "📄", "user id": "u 1" },
      protoKey: JSON.parse('{"__proto__":{"x":1},"constructor":"c"}'),
      tooDeep: { a: { b: { c: { d: { e: 1 } } } }, kept: 1 },
      tooLarge: { big: "x".repeat(5000), small: "kept" },
      tooManyKeys: Object.fromEntries(Array.from({ length: 100 }, (_, i) => ["k" + i, i])),
      longKey: { ["k".repeat(100)]: 1, ok: 1 },
      notJson: { at: new Date(0), fn: () => 1, nan: NaN, inf: Infinity, undef: undefined, big: 1n, cycle },
      notAnObject: "tenant-1",
    };
    const heard = {};
    for (const [kind, metadata] of Object.entries(kinds)) {
      const debug = (event) => (heard[kind] = event.dropped.map((drop) => drop.path + " (" + drop.reason + ")"));
      createUsageTracker({ telemetry: { endpoint: collector + "/v1/collect", metadata, debug } }).trackOpen(bytes);
    }
    return { kinds: Object.keys(kinds), heard };
  };
  window.trackOnce = async (collector, licenseKey) => {
    const bytes = new Uint8Array(await (await fetch("/document.docx")).arrayBuffer());
    return createUsageTracker({ licenseKey, telemetry: { endpoint: collector + "/v1/collect" } }).trackOpen(bytes)?.documentId;
  };
  // The reference editor's report, byte for byte as DESIGN.md records it (superdocVersion, origin-only
  // currentUrl, metadata as configured, documentCreatedAt null, no keepalive), its documentId the
  // documents[].id the application gives it: here our session's id for the bytes it opens. The
  // editor's export writes no GUID, so the application stamps it with the session's.
  window.reportAsReferenceEditor = async (collector, licenseKey, bytes, documentId) => {
    const body = {
      superdocVersion: "2.11.0",
      browserInfo: { userAgent: navigator.userAgent, currentUrl: location.origin, hostname: location.hostname, screenSize: { width: screen.width, height: screen.height } },
      metadata: { tenant: "t1", user: null, ctx: { plan: "pro" } },
      events: [{ timestamp: new Date().toISOString(), documentId, documentCreatedAt: null }],
    };
    const response = await fetch(collector + "/v1/collect", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-License-Key": licenseKey },
      body: JSON.stringify(body),
      credentials: "omit",
    });
    return response.status;
  };
  window.openAsReferenceEditor = async (collector, licenseKey, path) => {
    const bytes = new Uint8Array(await (await fetch(path)).arrayBuffer());
    const statuses = [];
    const first = openDocumentSession(bytes);
    statuses.push(await window.reportAsReferenceEditor(collector, licenseKey, bytes, first.documentId));
    const exported = first.stamp(bytes);
    const ids = [first.documentId];
    for (let i = 0; i < 2; i++) {
      const reopened = openDocumentSession(exported);
      ids.push(reopened.documentId);
      statuses.push(await window.reportAsReferenceEditor(collector, licenseKey, exported, reopened.documentId));
    }
    // left to itself, the editor sends a new random UUID per open
    statuses.push(await window.reportAsReferenceEditor(collector, licenseKey, bytes, crypto.randomUUID()));
    return { ids, statuses };
  };
  document.body.dataset.ready = "1";
</script>
`;

/** What each kind's report carries as metadata once the client has bounded it (absent: none). */
const SENT: Record<string, unknown> = {
  none: undefined,
  empty: undefined,
  flat: { customerId: "c-1", seats: 5, trial: false, region: null },
  referenceEditor: { tenant: "t1", user: null, ctx: { plan: "pro" } },
  nested: { a: { b: { c: "three levels" } }, list: [1, "two", { three: 3 }, [4]] },
  unicode: { "clé": "värde", "名前": "文書", emoji: "📄", "user id": "u 1" },
  protoKey: JSON.parse('{"__proto__":{"x":1},"constructor":"c"}'),
  tooDeep: { a: { b: { c: {} } }, kept: 1 },
  tooLarge: { small: "kept" },
  tooManyKeys: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, i])),
  longKey: { ok: 1 },
  notJson: { at: "1970-01-01T00:00:00.000Z", nan: null, inf: null },
  notAnObject: undefined,
};

/** What each kind's debug hook hears (kinds not listed: nothing). */
const HEARD: Record<string, string[]> = {
  tooDeep: ["metadata.a.b.c.d (too deep)"],
  tooLarge: ["metadata.big (too large)"],
  tooManyKeys: Array.from({ length: 16 }, (_, i) => `metadata.k${64 + i} (too many keys)`),
  longKey: [`metadata.${"k".repeat(100)} (key too long)`],
  notJson: ["metadata.fn (not JSON)", "metadata.undef (not JSON)", "metadata.big (not JSON)", "metadata.cycle (not JSON)"],
  notAnObject: ["metadata (not an object)"],
};

describe("the packed telemetry client in Chromium against the real /v1/collect: every kind of metadata", { timeout: 300_000 }, () => {
  let packed: PackedPackage;
  let platform: Platform;
  let site: StaticSite;
  let browser: Browser;
  const docx = corpusFile(DOCX);

  before(async () => {
    const [installed] = await Promise.all([
      installPackedTelemetryClient().then((result) => (packed = result)),
      startPlatform({ CONVERSION_POOL_SIZE: "1", DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN }).then((started) => (platform = started)),
      launchBrowser().then((launched) => (browser = launched)),
    ]);
    const bundle = await bundleForBrowser(pathToFileURL(join(installed.installed, "dist", "index.js")));
    // a consumer's own bundle: Rollup resolving the package by name from the project it is installed in
    writeFileSync(join(installed.project, "entry.js"), `export * from "${telemetryManifest.name}";\n`);
    const rollupBundle = await bundleWithRollup(join(installed.project, "entry.js"));
    site = await serveStatic({
      "/": { type: "text/html; charset=utf-8", body: PAGE },
      "/rollup.html": { type: "text/html; charset=utf-8", body: PAGE.replace('from "/telemetry.js"', 'from "/telemetry-rollup.js"') },
      "/telemetry.js": { type: "text/javascript; charset=utf-8", body: bundle },
      "/telemetry-rollup.js": { type: "text/javascript; charset=utf-8", body: rollupBundle },
      "/document.docx": { type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", body: docx },
      "/unstamped.docx": { type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", body: corpusFile(UNSTAMPED) },
    });
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    await platform?.stop();
    packed?.remove();
  });

  test("each report is accepted, the platform leaves out nothing more, the hook hears what the client left out, and the file counts once", async () => {
    const endpoint = `${platform.base}/v1/collect`;
    const page: Page = await (await browser.newContext()).newPage();
    // a keepalive request's answer body is the browser's, not the page's: its status is seen here, its body is sent again below
    const answers: { body: Record<string, unknown>; status: number }[] = [];
    page.on("response", (response) => {
      if (response.url() === endpoint && response.request().method() === "POST") answers.push({ body: response.request().postDataJSON(), status: response.status() });
    });
    const pageErrors: Error[] = [];
    page.on("pageerror", (error) => pageErrors.push(error));
    await page.goto(`${site.origin}/`);
    await page.waitForFunction("document.body.dataset.ready");
    const { kinds, heard } = (await page.evaluate(`window.reportEveryKind(${JSON.stringify(platform.base)})`)) as { kinds: string[]; heard: Record<string, string[]> };
    const deadline = Date.now() + 30_000;
    while (answers.length < kinds.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));

    assert.deepEqual(pageErrors, []);
    assert.equal(answers.length, kinds.length, "one report per kind");
    assert.deepEqual(
      answers.map((answer) => answer.status),
      kinds.map(() => 202),
    );
    // each kind's report carries its bounded metadata (answers may come in any order)
    const sorted = (values: unknown[]) => values.map((value) => JSON.stringify(value) ?? "none").sort();
    assert.deepEqual(sorted(answers.map((answer) => answer.body.metadata)), sorted(kinds.map((kind) => SENT[kind])));
    // the platform leaves out nothing of what the client sent: each body again, under a key of its own so the counts below stay the page's
    const replayKey = await registerLicenseKey(platform.base, "contract replay");
    for (const answer of answers) assert.deepEqual(await collect(platform.base, answer.body, replayKey).then((r) => [r.status, r.body]), [202, { accepted: 1 }]);
    assert.deepEqual(heard, Object.fromEntries(kinds.filter((kind) => HEARD[kind]).map((kind) => [kind, HEARD[kind]])));

    const day = new Date().toISOString().slice(0, 10);
    const counted = await usageWhen(platform.base, COMMUNITY_LICENSE_KEY, { from: day, to: day }, (body) => body.opens >= kinds.length);
    assert.deepEqual({ documents: counted.documents, opens: counted.opens }, { documents: 1, opens: kinds.length }, `one file, ${computeDocumentId(docx).documentId}, opened with every kind of metadata`);
  });

  test("bundled by Rollup from the installed package, it reports an open that counts once under its license key", async () => {
    const licenseKey = await registerLicenseKey(platform.base, "rollup bundle");
    const page: Page = await (await browser.newContext()).newPage();
    const pageErrors: Error[] = [];
    page.on("pageerror", (error) => pageErrors.push(error));
    await page.goto(`${site.origin}/rollup.html`);
    await page.waitForFunction("document.body.dataset.ready");
    const documentId = await page.evaluate(`window.trackOnce(${JSON.stringify(platform.base)}, ${JSON.stringify(licenseKey)})`);
    assert.deepEqual(pageErrors, []);
    assert.equal(documentId, computeDocumentId(docx).documentId);
    const day = new Date().toISOString().slice(0, 10);
    const counted = await usageWhen(platform.base, licenseKey, { from: day, to: day }, (body) => body.opens >= 1);
    assert.deepEqual({ documents: counted.documents, opens: counted.opens }, { documents: 1, opens: 1 });
  });

  test("the reference editor's reports, given our session's id as documents[].id and its exports stamped, count one document per file state, nested and null metadata included", async () => {
    const licenseKey = await registerLicenseKey(platform.base, "reference editor");
    const page: Page = await (await browser.newContext()).newPage();
    await page.goto(`${site.origin}/`);
    await page.waitForFunction("document.body.dataset.ready");
    const opened: { ids: string[]; statuses: number[] }[] = [];
    for (const path of ["/unstamped.docx", "/document.docx"]) {
      opened.push((await page.evaluate(`window.openAsReferenceEditor(${JSON.stringify(platform.base)}, ${JSON.stringify(licenseKey)}, ${JSON.stringify(path)})`)) as never);
    }
    assert.deepEqual(
      opened.flatMap((o) => o.statuses),
      [202, 202, 202, 202, 202, 202, 202, 202],
    );
    // a file without a GUID: counted by its bytes once, then by the GUID its stamped export carries
    const [unstamped, stamped] = opened;
    assert.equal(unstamped!.ids[0], computeDocumentId(corpusFile(UNSTAMPED)).documentId);
    assert.notEqual(unstamped!.ids[1], unstamped!.ids[0]);
    assert.equal(unstamped!.ids[2], unstamped!.ids[1], "the stamped export opens under one id");
    // a file with its GUID: the same id every time
    assert.deepEqual(stamped!.ids, Array(3).fill(computeDocumentId(corpusFile(DOCX)).documentId));

    const day = new Date().toISOString().slice(0, 10);
    const counted = await usageWhen(platform.base, licenseKey, { from: day, to: day }, (body) => body.opens >= 8);
    assert.deepEqual(
      [counted.documents, counted.documentsWithoutContentId, counted.opens],
      [5, 2, 8],
      "3 content ids (the unstamped file, its stamped export, the GUID file) and 2 random ids, one per open",
    );
    const grouped = await usage(platform.base, licenseKey, day, day, ADMIN_TOKEN, "metadata.tenant");
    assert.deepEqual(
      grouped.body.grouped.groups.map((g: { value: string; documents: number; opens: number }) => [g.value, g.documents, g.opens]),
      [["t1", 5, 8]],
    );
  });
});
