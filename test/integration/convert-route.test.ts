import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { MAX_HTML_NESTING, MAX_MARKDOWN_NESTING } from "../../services/conversion/nesting-limits.js";
import { makeDocx, zipBombDocx } from "../support/docx-fixtures.js";
import { convertFile, startPlatform, type Platform } from "../support/platform.js";
import { corpusFile } from "../support/corpus.js";
import { runCommand } from "../support/run-command.js";
import { docFromDocx } from "../support/written-by-libreoffice.js";

const corpus = corpusFile;
const MAX_BYTES = 2 * 1024 * 1024;

// POST /v1/convert in embedded mode: the gateway, ConversionService and a real LibreOffice pool in one process.
describe("POST /v1/convert (local LibreOffice pool)", () => {
  let platform: Platform;
  let scratch: string;
  let bomb: Buffer;

  before(async () => {
    // built before any connection to the platform is open: deflating 64 MB holds this process's event loop (about 1 s here)
    bomb = zipBombDocx(64 * 1024 * 1024);
    scratch = mkdtempSync(join(tmpdir(), "docservice-convert-"));
    platform = await startPlatform({ CONVERSION_POOL_SIZE: "2", CONVERSION_MAX_BYTES: String(MAX_BYTES), CONVERSION_MAX_UNPACKED_BYTES: String(20 * 1024 * 1024) });
  });

  after(async () => {
    await platform?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function errorOf(response: Response) {
    assert.match(response.headers.get("content-type") ?? "", /application\/json/);
    return (await response.json()) as { code: string; message: string; details?: Array<{ field: string; issue: string }> };
  }

  test("a DOCX becomes a PDF named after it, with its page count", async () => {
    const response = await convertFile(platform, corpus("10-pages.docx"), "Quarterly report.docx", "docx");
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/pdf");
    assert.equal(response.headers.get("content-disposition"), 'attachment; filename="Quarterly report.pdf"');
    assert.equal(response.headers.get("x-page-count"), "10");
    const pdf = Buffer.from(await response.arrayBuffer());
    const file = join(scratch, "out.pdf");
    writeFileSync(file, pdf);
    const checked = await runCommand("qpdf", ["--check", file], { timeoutMs: 60_000 });
    assert.equal(checked.code, 0, checked.output);
    assert.equal((await runCommand("qpdf", ["--show-npages", file], { timeoutMs: 60_000 })).output.trim(), "10");
  });

  test("the other formats LibreOffice converts well", async () => {
    const samples: Array<[string, Buffer]> = [
      ["txt", Buffer.from("Plain text converts too.\nSecond line.\n")],
      ["html", Buffer.from("<!doctype html><html><body><h1>Heading</h1><table><tr><td>cell one</td><td>cell two</td></tr></table></body></html>")],
      ["rtf", Buffer.from("{\\rtf1\\ansi{\\fonttbl\\f0\\fswiss Helvetica;}\\f0\\pard Rich text converts too.\\par}")],
      ["odt", corpus("libreoffice/tdf171025_pageAfter.docx")],
    ];
    for (const [from, bytes] of samples) {
      const response = await convertFile(platform, bytes, `sample.${from}`, from);
      assert.equal(response.status, 200, `${from}: ${response.status} ${response.status === 200 ? "" : await response.text()}`);
      assert.equal(Buffer.from(await response.arrayBuffer()).subarray(0, 5).toString(), "%PDF-");
    }
  });

  test("a legacy .doc converts with from=doc and is refused as docx", async () => {
    const doc = await docFromDocx(corpus("table.docx"));
    assert.equal((await convertFile(platform, doc, "table.doc", "doc")).status, 200);
    const asDocx = await convertFile(platform, doc, "table.doc", "docx");
    assert.equal(asDocx.status, 415);
    assert.match((await errorOf(asDocx)).message, /from=doc/);
  });

  test("an unsupported `from` is a 400 naming the allowed values", async () => {
    const response = await convertFile(platform, corpus("1-page.docx"), "a.docx", "pptx");
    assert.equal(response.status, 400);
    const body = await errorOf(response);
    assert.equal(body.code, "VALIDATION_ERROR");
    assert.deepEqual(body.details?.[0].field, "from");
    assert.match(body.message, /docx, doc, odt, rtf, txt, html/);
  });

  test("a PDF or a PNG sent as DOCX is a 415", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    for (const [bytes, what] of [[Buffer.from("%PDF-1.7\n%âãÏÓ\n"), "PDF"], [png, "PNG"]] as const) {
      const response = await convertFile(platform, bytes, "fake.docx", "docx");
      assert.equal(response.status, 415);
      assert.match((await errorOf(response)).message, new RegExp(what));
    }
  });

  test("encrypted, truncated and malformed documents are 422 with a clear message", async () => {
    const cases: Array<[string, RegExp]> = [
      ["libreoffice/Encrypted_MSO2010_abc.docx", /encrypted/],
      ["poi/truncated62886.docx", /damaged or truncated/],
      ["poi/clusterfuzz-testcase-minimized-POIXWPFFuzzer-6120975439364096.docx", /damaged/],
    ];
    for (const [name, message] of cases) {
      const response = await convertFile(platform, corpus(name), "bad.docx", "docx");
      assert.equal(response.status, 422, name);
      assert.match((await errorOf(response)).message, message);
    }
  });

  test("Markdown and HTML nested or slow past their limits are 422s naming the limit, within about 2 s", async () => {
    const cases: Array<[string, string, Buffer, RegExp]> = [
      ["50,000 nested block quotes", "md", Buffer.from(`${"> ".repeat(50_000)}x\n`), new RegExp(`more than ${MAX_MARKDOWN_NESTING} levels deep`)],
      ["100,000 nested divs (1.1 MB)", "html", Buffer.from(`${"<div>".repeat(100_000)}x${"</div>".repeat(100_000)}`), new RegExp(`more than ${MAX_HTML_NESTING} levels deep`)],
      // emphasis marked takes 30 s over: no scan bounds it, the sanitizer thread's time limit does
      ["270 KB of emphasis delimiters", "md", Buffer.from("a*".repeat(135_000)), /longer than \d+ ms, the limit for a document of its size/],
    ];
    for (const [what, from, bytes, message] of cases) {
      const started = performance.now();
      const response = await convertFile(platform, bytes, `hostile.${from}`, from);
      const tookMs = performance.now() - started;
      assert.equal(response.status, 422, what);
      const body = await errorOf(response);
      assert.equal(body.code, "UNPROCESSABLE_DOCUMENT", what);
      assert.match(body.message, message, what);
      assert.ok(tookMs < 2500, `${what}: answered after ${tookMs.toFixed(0)} ms`);
    }
  });

  test("Markdown and HTML nested as deep as the limits allow still convert", async () => {
    const list = Array.from({ length: MAX_MARKDOWN_NESTING }, (_, level) => `${"  ".repeat(level)}- level ${level + 1}`).join("\n");
    const divs = `<html><body>${"<div>".repeat(MAX_HTML_NESTING - 2)}deep${"</div>".repeat(MAX_HTML_NESTING - 2)}</body></html>`;
    for (const [from, bytes] of [["md", Buffer.from(list)], ["html", Buffer.from(divs)]] as const) {
      const response = await convertFile(platform, bytes, `deep.${from}`, from);
      assert.equal(response.status, 200, `${from}: ${response.status === 200 ? "" : await response.text()}`);
      assert.equal(Buffer.from(await response.arrayBuffer()).subarray(0, 5).toString(), "%PDF-");
    }
  });

  test("a ZIP bomb is refused before LibreOffice sees it", async () => {
    assert.ok(bomb.length < MAX_BYTES, "the bomb itself is small");
    const response = await convertFile(platform, bomb, "bomb.docx", "docx");
    assert.equal(response.status, 413);
    assert.match((await errorOf(response)).message, /unpacks to more than/);
  });

  test("missing file part and wrong content type are 400", async () => {
    const form = new FormData();
    form.append("note", "no file here");
    const noFile = await fetch(`${platform.base}/v1/convert?from=docx`, { method: "POST", body: form, headers: { Authorization: `Bearer ${platform.apiKey}` } });
    assert.equal(noFile.status, 400);
    assert.equal((await errorOf(noFile)).details?.[0].field, "file");
    const json = await fetch(`${platform.base}/v1/convert?from=docx`, {
      method: "POST",
      body: JSON.stringify({ file: "x" }),
      headers: { Authorization: `Bearer ${platform.apiKey}`, "Content-Type": "application/json" },
    });
    assert.equal(json.status, 400);
    assert.equal((await errorOf(json)).details?.[0].field, "Content-Type");
  });

  test("no API key → 401", async () => {
    const form = new FormData();
    form.append("file", new Blob([corpus("1-page.docx")]), "a.docx");
    const response = await fetch(`${platform.base}/v1/convert?from=docx`, { method: "POST", body: form });
    assert.equal(response.status, 401);
  });

  test("an oversized upload is refused with 413 before its body is read", async () => {
    // Headers promise a body far over the limit, and none of it is sent: only an early answer can arrive.
    const [status, connection] = await new Promise<[number, string | undefined]>((resolve, reject) => {
      const req = request(`${platform.base}/v1/convert?from=docx`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${platform.apiKey}`,
          "Content-Type": "multipart/form-data; boundary=x",
          "Content-Length": String(100 * 1024 * 1024),
        },
      });
      req.on("response", (res) => resolve([res.statusCode ?? 0, res.headers.connection]));
      req.on("error", reject);
      req.flushHeaders();
      setTimeout(() => reject(new Error("no answer within 5 s")), 5000).unref();
    });
    assert.equal(status, 413);
    assert.equal(connection, "close", "the unread body is not drained on a kept-alive connection");
  });

  test("a streamed upload over the limit is cut off with 413", async () => {
    const big = makeDocx(["x"], { "word/media/noise.bin": Uint8Array.from({ length: MAX_BYTES + 1024 }, () => Math.floor(Math.random() * 256)) });
    const response = await convertFile(platform, big, "big.docx", "docx");
    assert.equal(response.status, 413);
    assert.equal((await errorOf(response)).code, "PAYLOAD_TOO_LARGE");
  });
});
