// POST /v1/sign and /v1/verify with documents of many megabytes on the embedded platform (its own
// process): signed whatever JSON escapes the client writes, and within the memory the platform is
// sized for — one sign raises the process's resident high-water mark by less than 5× the file.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { noisePdf } from "../support/noise-pdf.js";
import { pdfsig } from "../support/pdf-validators.js";
import { startPlatform, type Platform } from "../support/platform.js";
import { residentRise } from "../support/process-memory.js";
import { postJson, signBody, signedPdfOf } from "../support/sign-requests.js";

const MB = 1024 * 1024;
const IMAGE_BYTES = 100_000;

describe("large documents on /v1/sign", () => {
  let platform: Platform;
  const dir = mkdtempSync(join(tmpdir(), "docservice-sign-large-"));
  const post = (path: string, body: string) => postJson(platform.base, path, body, platform.apiKey);

  before(async () => {
    platform = await startPlatform({ CONVERSION_POOL_SIZE: "1", SIGNING_MAX_BYTES: String(32 * MB) });
    // every worker thread warm, so the measurement sees the request, not the signer loading
    const warm = JSON.stringify(signBody(await noisePdf(1, IMAGE_BYTES)));
    for (const result of await Promise.all([0, 1, 2, 3].map(() => post("/v1/sign", warm)))) assert.equal(result.status, 200);
  });

  after(async () => {
    await platform?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a 6 MB PDF with every slash escaped (as PHP's json_encode writes it) is signed, and pdfsig accepts it", async () => {
    // over 3.3 MB, the schema's base64 pattern used to overflow the regexp stack: a 500
    const pdf = await noisePdf(60, IMAGE_BYTES);
    const body = JSON.stringify(signBody(pdf)).replaceAll("/", "\\/");
    const file = join(dir, "signed.pdf");
    writeFileSync(file, signedPdfOf(await post("/v1/sign", body)));
    const [signature] = (await pdfsig(file)).signatures;
    assert.ok(signature?.valid && signature.totalDocumentSigned, JSON.stringify(signature));
  });

  test("one sign of a 24 MB PDF raises the resident high-water mark by less than 5× the file; reading it up to the worker, by less than 3×", async () => {
    const pdf = await noisePdf(240, IMAGE_BYTES);
    const sign = JSON.stringify(signBody(pdf));
    // /v1/verify of as many bytes that are no PDF: read, decoded, handed to a worker, refused there at once
    const notPdf = JSON.stringify({ document: { base64: randomBytes(pdf.length).toString("base64") } });
    await sleep(1000);
    const signed = await residentRise(platform.process.pid, async () => assert.equal((await post("/v1/sign", sign)).status, 200));
    await sleep(1000);
    const read = await residentRise(platform.process.pid, async () => assert.equal((await post("/v1/verify", notPdf)).status, 422));
    const times = (rise: number) => `${(rise / MB).toFixed(0)} MB, ${(rise / pdf.length).toFixed(1)}× the file`;
    assert.ok(signed.rise < 5 * pdf.length, `sign: ${times(signed.rise)}`);
    assert.ok(read.rise < 3 * pdf.length, `up to the worker: ${times(read.rise)}`);
  });
});
