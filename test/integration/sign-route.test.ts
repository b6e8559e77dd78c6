// POST /v1/sign, POST /v1/verify and GET /v1/verify/key on the embedded
// platform (its own process, local key generated in the data directory, real
// LibreOffice for DOCX), checked with pdfsig, pyHanko, pdftotext and qpdf.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { strToU8, zipSync } from "fflate";
import { makeDocx } from "../support/docx-fixtures.js";
import { call } from "../support/key-flow.js";
import { pageCount, pdfText, tool } from "../support/pdf-tools.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { pdfsig, pyhankoValidate } from "../support/pdf-validators.js";
import { issueKeyFromOutbox, startPlatform, type Platform } from "../support/platform.js";
import { postJson, signBody, signedPdfOf, SIGNER } from "../support/sign-requests.js";

const MAX_BYTES = 2_000_000;
const dir = mkdtempSync(join(tmpdir(), "docservice-sign-route-"));
let counter = 0;
const file = (bytes: Buffer, extension = "pdf") => {
  const path = join(dir, `${++counter}.${extension}`);
  writeFileSync(path, bytes);
  return path;
};

/** `pdf` encrypted by qpdf (AES-256, a user password). */
async function encrypted(pdf: Buffer): Promise<Buffer> {
  const path = join(dir, `${++counter}-encrypted.pdf`);
  const result = await tool("qpdf", ["--encrypt", "user", "owner", "256", "--", file(pdf), path]);
  assert.equal(result.code, 0, result.stderr);
  return readFileSync(path);
}

/** A loopback file server: the document, redirects (also to a host that is not allow-listed), a 404 and an oversized body. */
async function startFileServer(pdf: Buffer): Promise<{ server: Server; base: string }> {
  const server = createServer((request, response) => {
    const port = (server.address() as AddressInfo).port;
    const path = request.url ?? "/";
    if (path === "/doc.pdf") return void response.writeHead(200, { "Content-Type": "application/pdf" }).end(pdf);
    if (path === "/redirect") return void response.writeHead(302, { Location: "/doc.pdf" }).end();
    if (path.startsWith("/loop/")) return void response.writeHead(302, { Location: `/loop/${Number(path.slice(6)) + 1}` }).end();
    if (path === "/to-localhost") return void response.writeHead(302, { Location: `http://localhost:${port}/doc.pdf` }).end();
    if (path === "/big") return void response.writeHead(200, { "Content-Type": "application/pdf" }).end(Buffer.alloc(MAX_BYTES + 1, 0x20));
    response.writeHead(404).end("not here");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe("/v1/sign and /v1/verify on the embedded platform", () => {
  let platform: Platform;
  let files: { server: Server; base: string };
  let pdf: Buffer;
  let certificatePath: string;
  let fingerprint: string;

  const sign = (body: unknown, apiKey = platform.apiKey) => postJson(platform.base, "/v1/sign", body, apiKey);
  const verify = (bytes: Buffer) => postJson(platform.base, "/v1/verify", { document: { base64: bytes.toString("base64") } }, platform.apiKey);

  before(async () => {
    pdf = await textPdf(1);
    files = await startFileServer(pdf);
    platform = await startPlatform({
      CONVERSION_POOL_SIZE: "1",
      SIGNING_MAX_BYTES: String(MAX_BYTES),
      SIGNING_METADATA_MAX_BYTES: "512",
      DOCUMENT_FETCH_ALLOW_HOSTS: new URL(files.base).host,
    });
    const key = await call(platform.base, "/v1/verify/key");
    assert.equal(key.status, 200);
    certificatePath = file(Buffer.from(key.body.certificatePem), "pem");
    fingerprint = key.body.sha256Fingerprint;
  });

  after(async () => {
    await platform?.stop();
    files?.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("GET /v1/verify/key describes the signing certificate", async () => {
    const { status, body } = await call(platform.base, "/v1/verify/key");
    assert.equal(status, 200);
    assert.match(body.certificatePem, /^-----BEGIN CERTIFICATE-----/);
    assert.match(body.publicKeyPem, /^-----BEGIN PUBLIC KEY-----/);
    assert.match(body.sha256Fingerprint, /^[0-9a-f]{64}$/);
    assert.equal(body.algorithm, "RSA-2048");
    assert.match(body.subject, /CN=DocService signing/);
    assert.ok(new Date(body.validity.notBefore) < new Date() && new Date() < new Date(body.validity.notAfter));
  });

  test("a PDF is signed with a certificate page: pdfsig and pyHanko accept it, /v1/verify too", async () => {
    const signed = signedPdfOf(await sign(signBody(pdf)));
    const path = file(signed);
    assert.equal(await pageCount(path), 2);
    const [signature] = (await pdfsig(path)).signatures;
    assert.ok(signature.valid && signature.totalDocumentSigned, JSON.stringify(signature));
    assert.equal(signature.signatureType, "ETSI.CAdES.detached");
    const pyhanko = await pyhankoValidate(path, certificatePath);
    assert.ok(pyhanko.valid && pyhanko.intact && pyhanko.coversEntireFile, pyhanko.raw);

    const { status, body } = await verify(signed);
    assert.equal(status, 200);
    assert.equal(body.valid, true, body.reason);
    assert.deepEqual(body.document.pages, 2);
    const [signer] = body.signers;
    assert.equal(signer.name, SIGNER.name);
    assert.equal(signer.email, SIGNER.email);
    assert.equal(signer.certificateFingerprint, fingerprint);
    assert.equal(signer.subFilter, "ETSI.CAdES.detached");
    assert.equal(signer.coversWholeDocument, true);
    assert.equal(signer.timestamped, false);
    assert.ok(Math.abs(Date.parse(signer.signedAt) - Date.now()) < 60_000);
  });

  test("certificate.enabled false keeps the page count", async () => {
    const signed = signedPdfOf(await sign(signBody(pdf, { certificate: { enabled: false } })));
    const path = file(signed);
    assert.equal(await pageCount(path), 1);
    assert.ok((await pdfsig(path)).signatures[0]?.valid);
    assert.doesNotMatch(await pdfText(path), /Audit Trail Certificate/);
  });

  test("the certificate page carries every field, in Cyrillic and CJK too", async () => {
    for (const name of ["Анна Каренина", "山田 太郎"]) {
      const eventId = `page-${name}`;
      const signed = signedPdfOf(await sign(signBody(pdf, { signer: { ...SIGNER, name }, eventId })));
      const text = (await pdfText(file(signed))).normalize("NFC");
      const original = createHash("sha256").update(pdf).digest("hex");
      for (const expected of [
        "Audit Trail Certificate",
        eventId,
        original,
        name,
        SIGNER.email,
        SIGNER.ip,
        SIGNER.userAgent,
        "CN=DocService signing",
        fingerprint,
        "2026-11-21T09:00:00",
        "2026-11-21T09:01:00",
        "fullName",
        "100",
      ]) {
        assert.ok(text.replace(/\s+/g, " ").includes(expected) || text.replace(/\s+/g, "").includes(expected.replace(/\s+/g, "")), `${expected} missing from:\n${text}`);
      }
      for (const type of ["ready", "scroll", "field_change", "submit"]) assert.match(text, new RegExp(type.replace("_", "[ _]"), "i"));
    }
  });

  test("a DOCX is converted through ConversionService and signed", async () => {
    const signed = signedPdfOf(await sign(signBody(makeDocx(["Contract of sale", "Signed below."]))));
    const path = file(signed);
    const text = await pdfText(path);
    assert.match(text, /Contract of sale/);
    assert.match(text, /Audit Trail Certificate/);
    const [signature] = (await pdfsig(path)).signatures;
    assert.ok(signature.valid && signature.totalDocumentSigned);
    assert.ok((await pyhankoValidate(path, certificatePath)).valid);
  });

  test("a URL is fetched (redirects followed) and signed", async () => {
    for (const url of [`${files.base}/doc.pdf`, `${files.base}/redirect`]) {
      const signed = signedPdfOf(await sign(signBody({ url })));
      assert.ok((await pdfsig(file(signed))).signatures[0]?.valid, url);
    }
  });

  test("eventId: the same request returns the same document; a different one is refused with 409", async () => {
    const body = signBody(pdf, { eventId: "order-1001", metadata: { orderId: 1001 } });
    const first = signedPdfOf(await sign(body));
    const again = signedPdfOf(await sign(body));
    assert.ok(first.equals(again), "a replay returns the stored document");
    const changed = await sign({ ...body, signer: { ...SIGNER, name: "Somebody Else" } });
    assert.equal(changed.status, 409);
    assert.equal(changed.body.code, "CONFLICT");
    assert.deepEqual(changed.body.details, [{ field: "eventId", issue: "was already used with a different request" }]);
    // eventIds are per API key: another key may use the same one for another document
    const other = await issueKeyFromOutbox(platform, "other@example.test");
    const otherSigned = signedPdfOf(await sign({ ...body, signer: { ...SIGNER, name: "Somebody Else" } }, other));
    assert.ok(!otherSigned.equals(first));
  });

  test("metadata is stored in the signed document information", async () => {
    const signed = signedPdfOf(await sign(signBody(pdf, { metadata: { orderId: 7, tags: ["a", "b"] } })));
    const info = await tool("pdfinfo", ["-custom", file(signed)]);
    assert.match(info.stdout, /DocServiceMetadata:\s*\{"orderId":7,"tags":\["a","b"\]\}/);
  });

  test("32 signs in parallel all validate", async () => {
    const results = await Promise.all(Array.from({ length: 32 }, () => sign(signBody(pdf))));
    for (const result of results) {
      const [signature] = (await pdfsig(file(signedPdfOf(result)))).signatures;
      assert.ok(signature?.valid && signature.totalDocumentSigned);
    }
  });

  test("/v1/verify: a tampered byte makes the document invalid, with the reason", async () => {
    const signed = signedPdfOf(await sign(signBody(pdf)));
    // one letter of the signer's /Name (UTF-16 hex, inside the signed range)
    const tampered = Buffer.from(signed);
    const producer = tampered.indexOf("/Name <FEFF");
    assert.ok(producer > 0);
    const digit = producer + "/Name <FEFF".length + 3;
    tampered[digit] = tampered[digit] === 0x30 ? 0x31 : 0x30;
    const { status, body } = await verify(tampered);
    assert.equal(status, 200);
    assert.equal(body.valid, false);
    assert.match(body.reason, /digest|modified|match/i);
    assert.equal(body.signers[0].intact, false);

    const unsigned = await verify(pdf);
    assert.equal(unsigned.status, 200);
    assert.equal(unsigned.body.valid, false);
    assert.match(unsigned.body.reason, /no signature/i);
  });

  describe("bad input", () => {
    const expectError = async (result: Awaited<ReturnType<typeof sign>>, status: number, code: string, message?: RegExp) => {
      assert.equal(result.status, status, JSON.stringify(result.body));
      assert.equal(result.body.code, code);
      assert.equal(typeof result.body.requestId, "string");
      if (message) assert.match(result.body.message, message);
    };

    test("no API key → 401; a body that is not JSON → 415 or 400", async () => {
      await expectError(await sign(signBody(pdf), ""), 401, "UNAUTHENTICATED");
      const text = await fetch(`${platform.base}/v1/sign`, {
        method: "POST",
        headers: { Authorization: `Bearer ${platform.apiKey}`, "Content-Type": "text/plain" },
        body: "hello",
      });
      assert.equal(text.status, 415);
      await expectError(await sign("{not json"), 400, "VALIDATION_ERROR", /not valid JSON/);
    });

    test("every validation problem is listed at once, with its field", async () => {
      const result = await sign({
        document: { base64: pdf.toString("base64"), url: "https://example.com/a.pdf" },
        signer: { email: "not-an-address", name: "J", phone: "+1 555", ip: "300.1.1.1" },
        auditTrail: [
          { type: "ready", timestamp: "2026-11-21 09:00" },
          { type: "scroll", timestamp: "2026-11-21T09:00:00Z", data: { percent: 101 } },
          { type: "wave", timestamp: "2026-11-21T09:00:00Z" },
        ],
        metadata: { blob: "x".repeat(600) },
        certificate: { enabled: "yes" },
      });
      await expectError(result, 400, "VALIDATION_ERROR");
      const fields = new Map(result.body.details.map((d: { field: string; issue: string }) => [d.field, d.issue]));
      for (const field of [
        "document",
        "signer.email",
        "signer.name",
        "signer.phone",
        "signer.ip",
        "auditTrail[0].timestamp",
        "auditTrail[1].data.percent",
        "auditTrail[2].type",
        "auditTrail",
        "metadata",
        "certificate.enabled",
      ]) {
        assert.ok(fields.has(field), `${field} missing from ${JSON.stringify(result.body.details)}`);
      }
      assert.match(String(fields.get("signer.phone")), /metadata/);
      assert.match(String(fields.get("auditTrail")), /submit/);
    });

    test("an empty audit trail, missing signer and missing document are 400s", async () => {
      const result = await sign({ auditTrail: [] });
      await expectError(result, 400, "VALIDATION_ERROR");
      const fields = result.body.details.map((d: { field: string }) => d.field);
      assert.deepEqual(fields.sort(), ["auditTrail", "document", "signer"]);
    });

    test("not a PDF or DOCX, corrupt or encrypted → 422 with a clear message; a signed PDF is countersigned", async () => {
      const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
      await expectError(await sign(signBody(png)), 422, "UNPROCESSABLE_DOCUMENT", /neither a PDF nor a DOCX/);
      await expectError(await sign(signBody(Buffer.from("%PDF-1.7\nthis is not really a pdf"))), 422, "UNPROCESSABLE_DOCUMENT", /PDF/);

      await expectError(await sign(signBody(await encrypted(pdf))), 422, "UNPROCESSABLE_DOCUMENT", /encrypted/);

      const signed = signedPdfOf(await sign(signBody(pdf)));
      const countersigned = signedPdfOf(await sign(signBody(signed)));
      assert.ok(countersigned.subarray(0, signed.length).equals(signed), "the signed document is kept byte for byte");
      const countersignedPath = join(dir, "countersigned.pdf");
      writeFileSync(countersignedPath, countersigned);
      const validation = await pdfsig(countersignedPath);
      assert.deepEqual(validation.signatures.map((signature) => signature.valid), [true, true], validation.raw);

      const notDocx = Buffer.from(zipSync({ "hello.txt": strToU8("a zip, not a DOCX") }));
      await expectError(await sign(signBody(notDocx)), 422, "UNPROCESSABLE_DOCUMENT");
      const truncatedDocx = makeDocx(["cut"]).subarray(0, 60);
      await expectError(await sign(signBody(truncatedDocx)), 422, "UNPROCESSABLE_DOCUMENT");
    });

    test("document.url: internal, metadata and non-http addresses, redirect abuse, 404 and oversize → 422 with the reason", async () => {
      const cases: [string, RegExp][] = [
        ["http://localhost:9/doc.pdf", /loopback/i],
        ["http://10.1.2.3/doc.pdf", /private/i],
        ["http://169.254.169.254/latest/meta-data/", /metadata|link-local/i],
        ["http://metadata.google.internal/computeMetadata/v1/", /metadata/i],
        [`${files.base}/to-localhost`, /loopback/i],
        [`${files.base}/loop/0`, /redirect/i],
        [`${files.base}/missing`, /404/],
        [`${files.base}/big`, new RegExp(String(MAX_BYTES))],
      ];
      for (const [url, reason] of cases) {
        await expectError(await sign(signBody({ url })), 422, "UNPROCESSABLE_DOCUMENT", reason);
      }
    });

    test("document.url that is not an http(s) URL → 400 naming document.url", async () => {
      for (const url of ["ftp://example.com/doc.pdf", "not a url"]) {
        const result = await sign(signBody({ url }));
        await expectError(result, 400, "VALIDATION_ERROR");
        assert.equal(result.body.details[0].field, "document.url");
      }
    });

    test("a document over the limit → 413", async () => {
      await expectError(await sign(signBody(Buffer.alloc(MAX_BYTES + 10, 0x25))), 413, "PAYLOAD_TOO_LARGE");
    });

    test("/v1/verify: an encrypted PDF, or one whose trailer lost /Root, → 422, not 200 without signature", async () => {
      await expectError(await verify(await encrypted(pdf)), 422, "UNPROCESSABLE_DOCUMENT", /encrypted/);
      // same length, so every offset holds; pdf-lib alone would find the catalog by its /Type
      const rootless = Buffer.from(pdf.toString("latin1").replace("/Root", "/Xoot"), "latin1");
      await expectError(await verify(rootless), 422, "UNPROCESSABLE_DOCUMENT", /damaged or truncated/);
    });

    test("no time-stamping authority: B-T and /v1/timestamp → 501 without Retry-After, once the document is found sound", async () => {
      const timestamp = (bytes: Buffer) => postJson(platform.base, "/v1/timestamp", { document: { base64: bytes.toString("base64") } }, platform.apiKey);
      const signed = signedPdfOf(await sign(signBody(pdf)));
      for (const result of [await sign(signBody(pdf, { level: "B-T" })), await timestamp(signed)]) {
        await expectError(result, 501, "NOT_CONFIGURED", /needs a time-stamping authority, and this server has none \(SIGNING_TSA_URL/);
        assert.equal(result.headers.get("retry-after"), null, "asking again will not help");
      }
      assert.deepEqual((await sign(signBody(pdf, { level: "B-LTA" }))).body.details.map((detail: { field: string }) => detail.field), ["level"]);
      // what is wrong with the document comes first
      const damaged = Buffer.from("%PDF-1.7\nthis is not really a pdf");
      for (const document of [damaged, await encrypted(signed)]) {
        await expectError(await sign(signBody(document, { level: "B-T" })), 422, "UNPROCESSABLE_DOCUMENT");
        await expectError(await timestamp(document), 422, "UNPROCESSABLE_DOCUMENT");
      }
      await expectError(await timestamp(pdf), 422, "UNPROCESSABLE_DOCUMENT", /no signature/);
    });

    test("/v1/verify: not a PDF → 422, bad body → 400", async () => {
      const result = await postJson(platform.base, "/v1/verify", { document: { base64: makeDocx(["x"]).toString("base64") } }, platform.apiKey);
      assert.equal(result.status, 422);
      const bad = await postJson(platform.base, "/v1/verify", { document: {}, extra: true }, platform.apiKey);
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body.details.map((d: { field: string }) => d.field).sort(), ["document", "extra"]);
    });
  });

  test("Connect: GetVerificationKey is public, Sign needs an API key", async () => {
    const connect = (method: string, body: unknown, apiKey?: string) =>
      postJson(platform.base, `/docservice.v1.SigningService/${method}`, body, apiKey);
    const key = await connect("GetVerificationKey", {});
    assert.equal(key.status, 200);
    assert.equal(key.body.certificateSha256, fingerprint);
    const anonymous = await connect("Sign", {});
    assert.equal(anonymous.body.code, "unauthenticated");
    const invalid = await connect("Sign", { signer: { email: "a@b.co", name: "Al" } }, platform.apiKey);
    assert.equal(invalid.body.code, "invalid_argument");
  });
});
