// The RFC 3161 client against a real local TSA (OpenSSL's `openssl ts -reply`,
// test/support/tsa.ts), and signPdf with it (PAdES B-T) checked by pdfsig,
// pyHanko and our own verifier.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import forge from "node-forge";
import { ServiceError } from "../../core/errors.js";
import { runOpenssl } from "../../../test/support/openssl.js";
import { textPdf } from "../../../test/support/pdf-fixtures.js";
import { pdfsig, pyhankoValidate } from "../../../test/support/pdf-validators.js";
import { freePort } from "../../../test/support/ports.js";
import { startTestTsa, type TestTsa } from "../../../test/support/tsa.js";
import { children, fromDerExact, toDer } from "../cms/asn1.js";
import { LOCAL_CERTIFICATE_FILE, loadOrCreateLocalKey } from "../keys/local-key.js";
import { DEFAULT_CONTENTS_RESERVATION_BYTES, TIMESTAMP_TOKEN_RESERVATION_BYTES, signPdf } from "../pdf/pdf-signer.js";
import { verifyPdfSignatures } from "../pdf/pdf-verifier.js";
import type { SigningKey } from "../keys/signing-key.js";
import { OID } from "../cms/asn1.js";
import { TimestampAuthority, signatureTimestampAttribute } from "./timestamp-authority.js";

const root = mkdtempSync(join(tmpdir(), "docservice-tsa-"));

/** Resolves to the ServiceError `promise` rejects with, after checking it is UNAVAILABLE and matches `message`. */
async function unavailable(promise: Promise<unknown>, message: RegExp): Promise<ServiceError> {
  const error = await promise.then(
    () => assert.fail("expected the timestamp request to fail"),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof ServiceError, `a ServiceError, got ${String(error)}`);
  assert.equal(error.code, "UNAVAILABLE");
  assert.match(error.message, message);
  return error;
}

/** `openssl ts -verify` of a token over `data`, trusting only the TSA's root. */
function opensslTsVerify(tsa: TestTsa, token: Buffer, data: Buffer) {
  writeFileSync(join(root, "token.der"), token);
  writeFileSync(join(root, "data.bin"), data);
  return runOpenssl(
    ["ts", "-verify", "-token_in", "-in", "token.der", "-data", "data.bin", "-CAfile", tsa.caCertificatePath],
    root,
  );
}

describe("TimestampAuthority", () => {
  let tsa: TestTsa;
  let client: TimestampAuthority;

  before(async () => {
    tsa = await startTestTsa();
    client = new TimestampAuthority({ url: tsa.url, timeoutMs: 5_000 });
  });
  afterEach(() => tsa.misbehave(undefined));
  after(async () => {
    await tsa?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test("returns a token over SHA-256 of the signature value that openssl ts -verify accepts", async () => {
    const signatureValue = Buffer.from("a CMS signature value, as the SignerInfo carries it");
    const token = await client.requestTimestampToken(signatureValue);

    const verified = opensslTsVerify(tsa, token, signatureValue);
    assert.equal(verified.status, 0, `openssl ts -verify: ${verified.stdout}${verified.stderr}`);
    assert.match(verified.stdout, /Verification: OK/);
    const other = opensslTsVerify(tsa, token, Buffer.from("another signature value"));
    assert.notEqual(other.status, 0, "the token must not verify for other data");

    // the token carries the TSA certificate (certReq) and a nonce
    const text = runOpenssl(["ts", "-reply", "-token_in", "-in", "token.der", "-token_out", "-text"], root);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^Nonce: 0x[0-9A-F]+$/m);
    assert.match(text.stdout, /^Hash Algorithm: sha256$/m);
  });

  test("signatureTimestampAttribute wraps the token as id-aa-signatureTimeStampToken", async () => {
    const token = await client.requestTimestampToken(Buffer.from("value"));
    const [type, values] = children(fromDerExact(signatureTimestampAttribute(token), "attribute"), "Attribute");
    assert.equal(forge.asn1.derToOid(String(type!.value)), OID.signatureTimeStampToken);
    const tokens = children(values, "attrValues");
    assert.equal(tokens.length, 1);
    assert.ok(toDer(tokens[0]!).equals(token));
  });

  test("a replayed reply: nonce mismatch, and messageImprint mismatch for other data", async () => {
    const signatureValue = Buffer.from("signature value");
    await client.requestTimestampToken(signatureValue);
    tsa.misbehave({ replay: true });
    await unavailable(client.requestTimestampToken(signatureValue), /nonce mismatch/);
    await unavailable(client.requestTimestampToken(Buffer.from("other value")), /messageImprint mismatch/);
  });

  test("a PKIStatus rejection names the status, failure and TSA text", async () => {
    tsa.misbehave({ reject: true });
    const error = await unavailable(client.requestTimestampToken(Buffer.from("x")), /refused the request: rejection \(badAlg\)/);
    assert.match(error.message, /^The timestamp authority \(127\.0\.0\.1:\d+\) /);
  });

  test("HTTP errors, wrong content types and malformed replies", async () => {
    tsa.misbehave({ httpStatus: 500 });
    await unavailable(client.requestTimestampToken(Buffer.from("x")), /answered HTTP 500/);
    tsa.misbehave({ contentType: "text/html" });
    await unavailable(client.requestTimestampToken(Buffer.from("x")), /Content-Type "text\/html"/);
    tsa.misbehave({ body: Buffer.from("<html>not a reply</html>") });
    await unavailable(client.requestTimestampToken(Buffer.from("x")), /malformed reply/);
    // a granted status without a token: SEQUENCE { SEQUENCE { INTEGER 0 } }
    tsa.misbehave({ body: Buffer.from("30053003020100", "hex") });
    await unavailable(client.requestTimestampToken(Buffer.from("x")), /sent no timestamp token/);
  });

  test("a TSA that does not answer in time, and one that cannot be reached", async () => {
    tsa.misbehave({ delayMs: 10_000 });
    const started = performance.now();
    const slow = new TimestampAuthority({ url: tsa.url, timeoutMs: 300 });
    await unavailable(slow.requestTimestampToken(Buffer.from("x")), /did not answer within 300 ms/);
    assert.ok(performance.now() - started < 5_000, "the timeout ends the request");

    const closed = new TimestampAuthority({ url: `http://127.0.0.1:${await freePort()}/tsa`, timeoutMs: 2_000 });
    await unavailable(closed.requestTimestampToken(Buffer.from("x")), /cannot be reached \(ECONNREFUSED\)/);
  });

  test("a connection dropped before the answer is asked again once; dropped twice, the request fails", async () => {
    const before = tsa.requests;
    tsa.misbehave({ hangUps: 1 });
    const token = await client.requestTimestampToken(Buffer.from("dropped once"));
    assert.ok(token.length > 0);
    assert.equal(tsa.requests - before, 2);

    tsa.misbehave({ hangUps: 2 });
    await unavailable(client.requestTimestampToken(Buffer.from("dropped twice")), /cannot be reached \((UND_ERR_SOCKET|ECONNRESET)\)/);
    assert.equal(tsa.requests - before, 4);
  });

  test("only http: and https: URLs", () => {
    assert.throws(() => new TimestampAuthority({ url: "ftp://tsa.example/" }), TypeError);
    assert.throws(() => new TimestampAuthority({ url: tsa.url, timeoutMs: 0 }), RangeError);
  });

  describe("signPdf with timestampAuthority (PAdES B-T)", () => {
    let key: SigningKey;
    let keyDirectory: string;

    before(async () => {
      keyDirectory = join(root, "key");
      key = await loadOrCreateLocalKey(keyDirectory, { algorithm: "RSA-2048" });
    });

    test("pdfsig, pyHanko and verifyPdfSignatures accept the signature and see its timestamp", async () => {
      const requestsBefore = tsa.requests;
      const signed = await signPdf(await textPdf(2), key, {
        signerName: "Timestamped signer",
        signingTime: new Date(),
        timestampAuthority: client,
      });
      assert.equal(tsa.requests, requestsBefore + 1, "one TSA request per signature");
      const file = join(root, "timestamped.pdf");
      await writeFile(file, signed);

      // the default reservation grows by the token's share
      const [, length, second] = signed.toString("latin1").match(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)/)!.slice(1).map(Number);
      assert.equal(second! - length!, 2 * (DEFAULT_CONTENTS_RESERVATION_BYTES + TIMESTAMP_TOKEN_RESERVATION_BYTES) + 2);

      const poppler = await pdfsig(file);
      assert.equal(poppler.signatures.length, 1, poppler.raw);
      assert.ok(poppler.signatures[0]!.valid, `pdfsig: ${poppler.raw}`);
      assert.ok(poppler.signatures[0]!.totalDocumentSigned, `pdfsig: ${poppler.raw}`);

      const hanko = await pyhankoValidate(file, [join(keyDirectory, LOCAL_CERTIFICATE_FILE), tsa.caCertificatePath]);
      assert.ok(hanko.timestamped, `pyHanko sees a sound signature timestamp: ${hanko.raw}`);
      assert.ok(hanko.timestampTrusted, `pyHanko trusts the TSA: ${hanko.raw}`);
      assert.ok(hanko.intact && hanko.trusted && hanko.coversEntireFile, hanko.raw);
      assert.ok(hanko.valid, hanko.raw);

      const verification = await verifyPdfSignatures(signed);
      assert.ok(verification.valid, verification.reason);
      assert.equal(verification.signers.length, 1);
      assert.equal(verification.signers[0]!.timestamped, true);
      assert.equal(verification.signers[0]!.intact, true);
      // a DSS-less timestamped signature is B-T, whatever its key (here self-signed)
      assert.equal(verification.signers[0]!.level, "B-T");
      assert.notEqual(verification.signers[0]!.timestampTime, "");
    });

    test("a failing TSA fails signPdf with UNAVAILABLE instead of signing without a timestamp", async () => {
      tsa.misbehave({ httpStatus: 503 });
      await unavailable(
        signPdf(await textPdf(1), key, { signerName: "A. Signer", signingTime: new Date(), timestampAuthority: client }),
        /answered HTTP 503/,
      );
    });
  });
});
