// The API reference page at /docs, as a reader's browser sees it: Debian's
// Chromium opens it on a running platform; Redoc, served by the gateway
// itself, renders the gateway's own /openapi.json, every operation appears,
// and the page loads nothing from anywhere else (its Content-Security-Policy
// blocks the one thing Redoc would fetch, its badge's logo) and logs no other error.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { API_REFERENCE_PATHS } from "../../services/gateway/api-reference.js";
import { launchBrowser } from "../support/browser.js";
import { startPlatform, type Platform } from "../support/platform.js";

interface OpenApi {
  paths: Record<string, Record<string, { operationId: string; summary: string }>>;
}

describe("the API reference page at /docs", { timeout: 300_000 }, () => {
  let platform: Platform;
  let browser: Browser;

  before(async () => {
    [platform, browser] = await Promise.all([startPlatform({ CONVERSION_POOL_SIZE: "1" }), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    await platform?.stop();
  });

  test("the page and the renderer come from the gateway, with a Content-Security-Policy that admits nothing else", async () => {
    const page = await fetch(`${platform.base}${API_REFERENCE_PATHS.page}`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'none'; script-src 'self';/);
    const script = await fetch(`${platform.base}${API_REFERENCE_PATHS.script}`);
    assert.equal(script.status, 200);
    assert.ok((await script.arrayBuffer()).byteLength > 500_000, "Redoc's standalone bundle");
  });

  test("Chromium renders every operation of /openapi.json, loading nothing from elsewhere and logging no error", async () => {
    const openApi = (await (await fetch(`${platform.base}/openapi.json`)).json()) as OpenApi;
    const operations = Object.values(openApi.paths).flatMap((methods) => Object.values(methods));
    assert.ok(operations.length >= 15, `${operations.length} operations`);

    const context = await browser.newContext();
    const tab = await context.newPage();
    const answered: string[] = [];
    const blocked: string[] = [];
    const problems: string[] = [];
    tab.on("response", (response) => answered.push(response.url()));
    tab.on("requestfailed", (request) => {
      if (/BLOCKED_BY_CSP|csp/i.test(request.failure()?.errorText ?? "")) blocked.push(request.url());
    });
    tab.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    tab.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    await tab.goto(`${platform.base}${API_REFERENCE_PATHS.page}`);
    await tab.waitForSelector(`[id$="operation/${operations[0]!.operationId}"]`, { timeout: 60_000 });

    const rendered = (await tab.evaluate(`[...document.querySelectorAll("[id*='operation/']")].map((element) => element.id)`)) as string[];
    const missing = operations.filter((operation) => !rendered.some((id) => id.endsWith(`operation/${operation.operationId}`)));
    assert.deepEqual(missing.map((operation) => operation.operationId), [], "operations the page does not render");
    const text = (await tab.evaluate("document.body.innerText")) as string;
    assert.match(text, /DocService/);
    // Redoc's menu shows its maker's badge with a logo from their CDN: the policy blocks it, and the badge hides the image
    const blockedBadge = (problem: string) => /^console: Loading the image 'https:\/\/cdn\.redoc\.ly\/[^']+' violates the following Content Security Policy directive/.test(problem);
    assert.deepEqual(problems.filter((problem) => !blockedBadge(problem)), []);
    const origin = new URL(platform.base).origin;
    const elsewhere = (url: string) => !url.startsWith(origin) && !url.startsWith("blob:") && !url.startsWith("data:");
    assert.deepEqual(answered.filter(elsewhere), [], "answers from outside the platform");
    assert.ok(blocked.every((url) => url.startsWith("https://cdn.redoc.ly/")), `blocked: ${blocked.join(", ")}`);
    await context.close();
  });
});
