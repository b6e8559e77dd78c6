import assert from "node:assert/strict";
import { after, test } from "node:test";
import { ServiceError } from "../core/errors.js";
import { sanitizeHtmlDocument } from "./html-sanitizer.js";
import { markdownToHtml } from "./markdown-source.js";
import { MAX_MARKDOWN_NESTING } from "./nesting-limits.js";
import { neutralizeRtfFields } from "./rtf-fields.js";
import { SANITIZE_BASE_MS, SANITIZE_MS_PER_MB, sanitizeBudgetMs, SanitizerThread } from "./sanitizer-thread.js";

const sanitizer = new SanitizerThread();
after(() => sanitizer.close());

const page = (rows: number) =>
  Buffer.from(
    `<html><head><title>T</title><link rel="stylesheet" href="http://127.0.0.1:9/x.css"></head><body><h1>Report</h1><img src="http://127.0.0.1:9/a.png">` +
      `<table>${"<tr><td style=\"color:red;background:url(http://127.0.0.1:9/b.png)\">cell</td><td>ünïcode</td></tr>".repeat(rows)}</table></body></html>`,
  );

test("the thread's page is the one sanitizeHtmlDocument makes", async () => {
  const html = page(3);
  const clean = await sanitizer.sanitize(html, "html");
  assert.deepEqual(clean, sanitizeHtmlDocument(html));
  assert.doesNotMatch(clean.toString(), /127\.0\.0\.1/);
  assert.match(clean.toString(), /ünïcode/);
});

test("a large page is sanitized without holding up the calling thread", async () => {
  const html = page(40_000); // about 4 MB
  let longestGapMs = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  const clean = await sanitizer.sanitize(html, "html");
  const tookMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 20)); // a tick after the answer measures the gap before it
  clearInterval(ticker);
  assert.doesNotMatch(clean.subarray(0, 10_000).toString(), /127\.0\.0\.1/);
  assert.ok(tookMs > 300, `sanitizing took ${tookMs.toFixed(0)} ms: too little to tell`);
  assert.ok(longestGapMs < tookMs / 3, `the event loop stood still for ${longestGapMs.toFixed(0)} ms of ${tookMs.toFixed(0)} ms`);
});

test("pages sent together all come back, each its own", async () => {
  const pages = [1, 2, 3, 4].map((rows) => page(rows));
  const cleans = await Promise.all(pages.map((html) => sanitizer.sanitize(html, "html")));
  cleans.forEach((clean, i) => assert.deepEqual(clean, sanitizeHtmlDocument(pages[i])));
});

test("Markdown is rendered, then sanitized, on the thread", async () => {
  const markdown = Buffer.from('# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![x](http://127.0.0.1:9/x.png) <img src="file:///etc/hostname">\n');
  const clean = await sanitizer.sanitize(markdown, "markdown");
  assert.deepEqual(clean, sanitizeHtmlDocument(markdownToHtml(markdown)));
  assert.match(clean.toString(), /<h1>Title<\/h1>[\s\S]*<td>1<\/td>/);
  assert.doesNotMatch(clean.toString(), /127\.0\.0\.1|file:/);
});

test("RTF is rewritten on the thread as neutralizeRtfFields rewrites it", async () => {
  const rtf = Buffer.from('{\\rtf1\\ansi {\\field{\\*\\fldinst INCLUDEPICTURE "file:///etc/hostname" \\\\d}{\\fldrslt old}}}', "latin1");
  const clean = await sanitizer.sanitize(rtf, "rtf");
  assert.deepEqual(clean, neutralizeRtfFields(rtf));
  assert.doesNotMatch(clean.toString("latin1"), /INCLUDEPICTURE|hostname/);
  assert.match(clean.toString("latin1"), /fldrslt old/);
});

const unprocessable = (message: RegExp) => (error: unknown) => {
  assert.ok(error instanceof ServiceError, String(error));
  assert.equal(error.code, "UNPROCESSABLE_DOCUMENT");
  assert.match(error.message, message);
  return true;
};

test("Markdown nested past the limit is a 422 naming it, not a stack overflow; the thread carries on", async () => {
  await assert.rejects(sanitizer.sanitize(Buffer.from(`${"> ".repeat(50_000)}x\n`), "markdown"), unprocessable(new RegExp(`more than ${MAX_MARKDOWN_NESTING} levels`)));
  assert.match((await sanitizer.sanitize(Buffer.from("> quoted\n"), "markdown")).toString(), /<blockquote>/);
});

test("the time limit grows with the source, for HTML and Markdown only", () => {
  assert.equal(sanitizeBudgetMs("html", 0), SANITIZE_BASE_MS);
  assert.equal(sanitizeBudgetMs("markdown", 1_000_000), SANITIZE_BASE_MS + SANITIZE_MS_PER_MB);
  assert.equal(sanitizeBudgetMs("odt", 1_000_000), undefined);
  assert.equal(sanitizeBudgetMs("rtf", 1_000_000), undefined);
});

test("Markdown that keeps marked busy past the time limit is a 422 naming it; the thread is replaced", async () => {
  const markdown = Buffer.from("a*".repeat(135_000)); // 270 KB; marked alone takes 30 s
  const budgetMs = sanitizeBudgetMs("markdown", markdown.length)!;
  const started = performance.now();
  await assert.rejects(sanitizer.sanitize(markdown, "markdown"), unprocessable(new RegExp(`longer than ${budgetMs} ms`)));
  const tookMs = performance.now() - started;
  assert.ok(tookMs >= budgetMs && tookMs < budgetMs + 1000, `refused after ${tookMs.toFixed(0)} ms, the limit being ${budgetMs} ms`);
  assert.deepEqual(await sanitizer.sanitize(page(1), "html"), sanitizeHtmlDocument(page(1)));
});
