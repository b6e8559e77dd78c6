// Truncated, chunked and aborted bodies on every body-taking route of a live
// embedded platform: each gets the JSON error body, nothing is left in flight,
// no conversion temp file stays behind, and the process keeps serving.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { makeDocx } from "../support/docx-fixtures.js";
import { abortedUpload, chunkedUpload, exactUpload, type RawAnswer } from "../support/raw-upload.js";
import { convertFile, startPlatform, type Platform } from "../support/platform.js";
import { waitFor } from "../support/wait.js";

const MAX_BYTES = 1024 * 1024;
const ADMIN_TOKEN = "upload-robustness-admin-token";

interface BodyRoute {
  path: string;
  contentType: string;
  /** A valid start of a body, before the filler that makes it too long. */
  head: Buffer;
  auth: "apiKey" | "admin" | "none";
}

const BOUNDARY = "----docservice-test";
const multipartHead = (filename: string) =>
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);

const ROUTES: BodyRoute[] = [
  { path: "/v1/convert?from=docx", contentType: `multipart/form-data; boundary=${BOUNDARY}`, head: multipartHead("big.docx"), auth: "apiKey" },
  { path: "/v1/sign", contentType: "application/json", head: Buffer.from('{"document":{"base64":"'), auth: "apiKey" },
  { path: "/v1/verify", contentType: "application/json", head: Buffer.from('{"document":{"base64":"'), auth: "apiKey" },
  { path: "/v1/collect", contentType: "application/json", head: Buffer.from('{"libraryVersion":"'), auth: "none" },
  { path: "/v1/admin/license-keys", contentType: "application/json", head: Buffer.from('{"customer":"'), auth: "admin" },
];

describe("uploads that are too long, cut off or malformed", () => {
  let platform: Platform;

  before(async () => {
    platform = await startPlatform({
      CONVERSION_POOL_SIZE: "1",
      CONVERSION_MAX_BYTES: String(MAX_BYTES),
      SIGNING_MAX_BYTES: String(MAX_BYTES),
      DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
    });
    await waitFor(async () => (await fetch(`${platform.base}/v1/health`)).status === 200, { what: "every backend healthy", timeoutMs: 60_000 });
  });
  after(() => platform?.stop());

  const headersFor = (route: BodyRoute): Record<string, string> => {
    const headers: Record<string, string> = { "Content-Type": route.contentType };
    if (route.auth === "apiKey") headers.Authorization = `Bearer ${platform.apiKey}`;
    if (route.auth === "admin") headers.Authorization = `Bearer ${ADMIN_TOKEN}`;
    return headers;
  };

  /** Requests being served, not counting the scrape asking. */
  async function requestsInFlight(): Promise<number> {
    const metrics = await (await fetch(`${platform.base}/metrics`)).text();
    return Number(/^docservice_http_requests_in_flight (\d+)/m.exec(metrics)?.[1]) - 1;
  }

  async function assertIdle(): Promise<void> {
    await waitFor(async () => (await requestsInFlight()) === 0, { what: "no request in flight", timeoutMs: 5000 });
    assert.deepEqual(readdirSync(join(platform.dataDir, "conversion", "work")), [], "no conversion temp file is left");
    assert.equal((await fetch(`${platform.base}/v1/health`)).status, 200, "the process still serves");
  }

  function assertJsonError(answer: RawAnswer, status: number, code: string): void {
    assert.equal(answer.status, status, answer.body);
    assert.match(String(answer.headers["content-type"]), /application\/json/);
    const body = JSON.parse(answer.body) as { code: string; requestId: string };
    assert.equal(body.code, code);
    assert.ok(body.requestId);
  }

  for (const route of ROUTES) {
    test(`${route.path}: a chunked body past the limit is answered 413 with the JSON body`, async () => {
      const answer = await chunkedUpload(`${platform.base}${route.path}`, headersFor(route), route.head, 16 * MAX_BYTES);
      assertJsonError(answer, 413, "PAYLOAD_TOO_LARGE");
      await assertIdle();
    });

    test(`${route.path}: a client that disconnects mid-upload leaves nothing behind`, async () => {
      await abortedUpload(`${platform.base}${route.path}`, headersFor(route), Buffer.concat([route.head, Buffer.alloc(32 * 1024, "A")]), MAX_BYTES / 2);
      await assertIdle();
    });

    test(`${route.path}: a body that ends early is a 400`, async () => {
      const answer = await exactUpload(`${platform.base}${route.path}`, headersFor(route), Buffer.concat([route.head, Buffer.from("PK\u0003\u0004abc")]));
      assertJsonError(answer, 400, "VALIDATION_ERROR");
      await assertIdle();
    });
  }

  test("a multipart form cut before its closing boundary, twice, as the reporter sent it, does not stop the process", async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await exactUpload(`${platform.base}/v1/convert?from=docx`, headersFor(ROUTES[0]), Buffer.concat([multipartHead("a.docx"), Buffer.from("PK\u0003\u0004")]));
      assertJsonError(answer, 400, "VALIDATION_ERROR");
      assert.match(JSON.parse(answer.body).message, /Unexpected end of form/);
    }
    await assertIdle();
  });

  test("a non-ASCII upload name comes back once encoded in filename*", async () => {
    const response = await convertFile(platform, makeDocx(["Привет, 世界"]), "доклад 报告.docx", "docx");
    assert.equal(response.status, 200, await response.clone().text());
    const disposition = response.headers.get("content-disposition") ?? "";
    const encoded = /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1];
    assert.ok(encoded, disposition);
    assert.equal(decodeURIComponent(encoded), "доклад 报告.pdf");
  });
});
