// The telemetry client in a real browser (Debian's Chromium through
// playwright-core): a test page on one origin loads the client bundled by
// esbuild, opens a DOCX from the corpus and reports it to /v1/collect on the
// platform, another origin, so the CORS preflight and the cross-origin POST
// really happen. With the collector stopped, the page keeps working and shows
// no error.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, ConsoleMessage, Page, Request } from "playwright-core";
import { computeDocumentId, COMMUNITY_LICENSE_KEY, crc32Hex, LIBRARY_VERSION } from "../../clients/telemetry/index.js";
import { launchBrowser } from "../support/browser.js";
import { bundleForBrowser, serveStatic, type StaticSite } from "../support/browser-page.js";
import { corpusFile } from "../support/corpus.js";
import { startPlatform, type Platform } from "../support/platform.js";
import { ADMIN_TOKEN, today, usage, usageWhen } from "../support/usage-reports.js";
import { canConnect, waitFor } from "../support/wait.js";

const DOCX = "1-page.docx";

/**
 * The test page: the collector's base URL comes in the query string. Opening
 * fetches the DOCX and reports it with `trackOpen`, then shows the id the
 * library computed; the button opens it again without reloading.
 */
const PAGE = `<!doctype html>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>telemetry test page</title>
<p id="status">Opening…</p>
<button id="open-again">Open again</button>
<script type="module">
  import { createUsageTracker } from "/telemetry.js";
  const collector = new URLSearchParams(location.search).get("collector");
  const tracker = createUsageTracker({ telemetry: { endpoint: collector + "/v1/collect" } });
  let opens = 0;
  async function open() {
    const bytes = new Uint8Array(await (await fetch("/document.docx")).arrayBuffer());
    const { documentId } = tracker.trackOpen(bytes);
    opens += 1;
    document.body.dataset.opened = documentId;
    document.body.dataset.opens = String(opens);
    document.getElementById("status").textContent = "Opened " + documentId;
  }
  document.getElementById("open-again").addEventListener("click", open);
  await open();
</script>
`;

/** What one page did: requests to the collect route, CORS preflights (seen through CDP: playwright does not report them), console and errors. */
interface PageLog {
  posts: Request[];
  failedPosts: Request[];
  preflights: { url: string; status?: number; headers?: Record<string, string> }[];
  console: ConsoleMessage[];
  pageErrors: Error[];
}

async function watch(page: Page, endpoint: string): Promise<PageLog> {
  const log: PageLog = { posts: [], failedPosts: [], preflights: [], console: [], pageErrors: [] };
  page.on("request", (request) => request.url() === endpoint && request.method() === "POST" && log.posts.push(request));
  page.on("requestfailed", (request) => request.url() === endpoint && request.method() === "POST" && log.failedPosts.push(request));
  page.on("console", (message) => log.console.push(message));
  page.on("pageerror", (error) => log.pageErrors.push(error));
  const cdp = await page.context().newCDPSession(page);
  const preflights = new Map<string, PageLog["preflights"][number]>();
  cdp.on("Network.requestWillBeSent", ({ requestId, request, initiator }) => {
    if (initiator.type !== "preflight" || request.url !== endpoint) return;
    const preflight = { url: request.url };
    preflights.set(requestId, preflight);
    log.preflights.push(preflight);
  });
  cdp.on("Network.responseReceived", ({ requestId, response }) => {
    const preflight = preflights.get(requestId);
    if (preflight) Object.assign(preflight, { status: response.status, headers: response.headers });
  });
  await cdp.send("Network.enable");
  return log;
}

/** Lets the page run the tasks it has queued (a rejection nobody handles is reported in one), so its errors reach us before we look. */
const settle = (page: Page) => page.evaluate("new Promise((resolve) => setTimeout(() => setTimeout(resolve, 0), 0))");

const dataset = (page: Page, key: string) => page.evaluate(`document.body.dataset.${key} ?? null`);

describe("telemetry client in Chromium: a cross-origin page reports a DOCX open", { timeout: 120_000 }, () => {
  let platform: Platform;
  let site: StaticSite;
  let browser: Browser;
  let endpoint: string;
  let pageUrl: string;
  const contexts: BrowserContext[] = [];
  const docx = corpusFile(DOCX);
  const expected = computeDocumentId(docx);

  before(async () => {
    // A fresh platform, so the community key's counts start at 0 (the embedded pipeline: no Kafka, no Redis).
    // Assigned as each is ready, so after() stops whatever started even when another failed.
    const [, bundle] = await Promise.all([
      startPlatform({ CONVERSION_POOL_SIZE: "1", DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN }).then((started) => (platform = started)),
      bundleForBrowser(new URL("../../clients/telemetry/index.ts", import.meta.url)),
      launchBrowser().then((launched) => (browser = launched)),
    ]);
    site = await serveStatic({
      "/": { type: "text/html; charset=utf-8", body: PAGE },
      "/telemetry.js": { type: "text/javascript; charset=utf-8", body: bundle },
      "/document.docx": { type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", body: docx },
    });
    endpoint = `${platform.base}/v1/collect`;
    // a query and a fragment that carry a token, as pages' addresses do: the report must drop both
    pageUrl = `${site.origin}/?collector=${encodeURIComponent(platform.base)}&token=page-secret#access=fragment-secret`;
  });

  after(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await browser?.close();
    await site?.close();
    await platform?.stop();
  });

  /** A fresh browser profile (no cached preflight) with a cookie for 127.0.0.1, which every port shares: sent only where credentials are. */
  async function openPage(): Promise<{ page: Page; log: PageLog }> {
    const context = await browser.newContext();
    contexts.push(context);
    await context.addCookies([{ name: "session", value: "page-cookie", url: site.origin }]);
    const page = await context.newPage();
    return { page, log: await watch(page, endpoint) };
  }

  test("the page's report reaches the collector once, with the id Node computes, through a real CORS preflight", async () => {
    // The file has a GUID and a created time: the browser must unzip it and read its XML, not just hash its bytes.
    assert.notEqual(expected.documentId, `HASH-${crc32Hex(docx)}`);
    assert.notEqual(site.origin, new URL(platform.base).origin, "the page and the collector are different origins");
    const fresh = await usage(platform.base, COMMUNITY_LICENSE_KEY, today(), today());
    assert.equal(fresh.body.opens, 0, "a fresh collector");

    const { page, log } = await openPage();
    const docxFetched = page.waitForRequest(`${site.origin}/document.docx`);
    const accepted = page.waitForResponse((response) => response.url() === endpoint && response.request().method() === "POST");
    await page.goto(pageUrl);
    await page.waitForFunction("document.body.dataset.opened");
    const response = await accepted;

    // What the page computed and shows.
    assert.equal(await dataset(page, "opened"), expected.documentId);
    assert.equal(await page.textContent("#status"), `Opened ${expected.documentId}`);

    // Exactly one report, cross-origin, without credentials, with the right body, accepted.
    assert.equal(log.posts.length, 1);
    const post = log.posts[0]!;
    assert.equal(post, response.request());
    const headers = await post.allHeaders();
    assert.equal(headers.origin, site.origin, "sent from the page's origin");
    assert.equal(headers["x-license-key"], COMMUNITY_LICENSE_KEY);
    assert.match(headers["content-type"] ?? "", /^application\/json/);
    assert.equal((await (await docxFetched).allHeaders()).cookie, "session=page-cookie", "the page's own requests carry the cookie");
    assert.equal(headers.cookie, undefined, "credentials: 'omit': the cookie, valid on every 127.0.0.1 port, is not sent");
    const body = post.postDataJSON();
    assert.equal(body.libraryVersion, LIBRARY_VERSION);
    assert.equal(body.events.length, 1);
    assert.equal(body.events[0].documentId, expected.documentId);
    assert.equal(body.events[0].documentCreatedAt, expected.documentCreatedAt);
    assert.equal(body.browserInfo.currentUrl, `${site.origin}/`, "the page's address without its query or fragment");
    assert.ok(!post.postData()!.includes("secret"), "no token from the page's address");
    assert.equal(body.browserInfo.hostname, "127.0.0.1");
    assert.match(body.browserInfo.userAgent, /Chrom/);
    assert.equal(response.status(), 202);
    assert.equal((await response.allHeaders())["access-control-allow-origin"], "*");

    // The preflight happened (application/json and X-License-Key are not "simple") and allowed the POST.
    await waitFor(async () => log.preflights.every((preflight) => preflight.status !== undefined), { what: "the preflight's response" });
    assert.equal(log.preflights.length, 1, JSON.stringify(log.preflights));
    assert.equal(log.preflights[0]!.status, 204);
    assert.equal(log.preflights[0]!.headers?.["Access-Control-Allow-Origin"], "*");

    // The collector counted it: one open of one document on the event's day, for the community key.
    const day = (body.events[0].timestamp as string).slice(0, 10);
    const counted = await usageWhen(platform.base, COMMUNITY_LICENSE_KEY, { from: day, to: day }, (b) => b.opens >= 1);
    assert.deepEqual(
      { documents: counted.documents, opens: counted.opens, byDay: counted.byDay },
      { documents: 1, opens: 1, byDay: [{ date: day, documents: 1, documentsWithoutContentId: 0, opens: 1 }] },
    );

    // Still one request in the end, and a successful open is silent.
    await settle(page);
    assert.equal(log.posts.length, 1);
    assert.deepEqual(log.pageErrors, []);
    assert.deepEqual(log.console.map(describeMessage), []);
  });

  test("with the collector stopped, the page still opens the document, twice, and shows no error", async () => {
    await platform.stop();
    assert.equal(await canConnect(Number(new URL(platform.base).port)), false, "the collector is down");

    const { page, log } = await openPage();
    await page.goto(pageUrl);
    await waitFor(async () => (await dataset(page, "opens")) === "1" && log.failedPosts.length === 1, { what: "the first open and its failed report" });
    await page.click("#open-again");
    await waitFor(async () => (await dataset(page, "opens")) === "2" && log.failedPosts.length === 2, { what: "the second open and its failed report" });
    await settle(page);

    assert.equal(await dataset(page, "opened"), expected.documentId);
    assert.equal(await page.textContent("#status"), `Opened ${expected.documentId}`);
    assert.equal(log.posts.length, 2, "one attempt per open, never retried");
    for (const failed of log.failedPosts) assert.match(failed.failure()?.errorText ?? "", /ERR_CONNECTION_REFUSED/);
    // Nothing thrown and no unhandled rejection: the tracker swallows the failed fetch.
    assert.deepEqual(log.pageErrors, []);
    // Chromium itself logs a refused connection to the console ("Failed to load resource:
    // net::ERR_CONNECTION_REFUSED", located at the collect URL), as it does for any failed
    // load; no script can stop that, and the reference client gets the same line. It is the
    // browser's network log, not the page's: anything else in the console (a console.* call
    // from the library, a CORS complaint, an uncaught error) fails the test.
    const own = log.console.filter((message) => !isNetworkLog(message, endpoint));
    assert.deepEqual(own.map(describeMessage), []);
    assert.ok(log.console.length <= log.failedPosts.length, log.console.map(describeMessage).join("\n"));
  });
});

/** Chromium's own line for a request to the collector that could not connect. */
function isNetworkLog(message: ConsoleMessage, endpoint: string): boolean {
  return message.type() === "error" && message.text() === "Failed to load resource: net::ERR_CONNECTION_REFUSED" && message.location().url === endpoint;
}

const describeMessage = (message: ConsoleMessage) => `${message.type()}: ${message.text()} (${message.location().url})`;
