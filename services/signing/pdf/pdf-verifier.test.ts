import assert from "node:assert/strict";
import { X509Certificate, createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { PDFDocument } from "pdf-lib";
import { ServiceError } from "../../core/errors.js";
import { TEST_PKI, createTestPki } from "../../../test/support/openssl.js";
import { loadLocalKeyFromFiles, loadOrCreateLocalKey } from "../keys/local-key.js";
import { signPdf } from "./pdf-signer.js";
import { verifyPdfSignatures } from "./pdf-verifier.js";
import type { SigningKey } from "../keys/signing-key.js";
import { textPdf } from "../../../test/support/pdf-fixtures.js";

const root = mkdtempSync(join(tmpdir(), "docservice-pdf-verifier-"));
after(() => rmSync(root, { recursive: true, force: true }));

const SIGNING_TIME = new Date("2025-03-04T05:06:07Z");


function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A one-page PDF whose trailer `edit` changed before it was saved. */
async function pdfWithTrailer(edit: (document: PDFDocument) => void): Promise<Buffer> {
  const document = await PDFDocument.create();
  document.addPage([200, 200]);
  edit(document);
  return Buffer.from(await document.save({ useObjectStreams: false }));
}

const unprocessable = (message: RegExp) => (error: unknown) => {
  assert.ok(error instanceof ServiceError, String(error));
  assert.equal(error.code, "UNPROCESSABLE_DOCUMENT");
  assert.match(error.message, message);
  return true;
};

describe("verifyPdfSignatures", () => {
  let rsa: SigningKey;
  let ec: SigningKey;
  let unrelated: SigningKey;
  let signed: Buffer;

  before(async () => {
    rsa = await loadOrCreateLocalKey(join(root, "rsa"), { algorithm: "RSA-2048", subject: "Alice Example" });
    ec = await loadOrCreateLocalKey(join(root, "ec"), { algorithm: "ECDSA-P256", subject: "Bob Example" });
    unrelated = await loadOrCreateLocalKey(join(root, "unrelated"), { algorithm: "ECDSA-P256", subject: "Mallory" });
    signed = await signPdf(await textPdf(2), rsa, { signerName: "Zoë Ünal", signingTime: SIGNING_TIME });
  });

  test("a signed PDF verifies", async () => {
    const result = await verifyPdfSignatures(signed);
    assert.equal(result.valid, true, result.reason);
    assert.equal(result.reason, "All 1 signature(s) are intact and cover the whole document.");
    assert.deepEqual(result.document, { sha256: sha256(signed), pages: 2 });
    assert.equal(result.signers.length, 1);
    const [signer] = result.signers;
    assert.equal(signer!.intact, true);
    assert.equal(signer!.problem, undefined);
    assert.equal(signer!.coversWholeDocument, true);
    assert.equal(signer!.timestamped, false);
    assert.equal(signer!.name, "Zoë Ünal"); // the dictionary's /Name
    assert.equal(signer!.email, "");
    assert.equal(signer!.subFilter, "ETSI.CAdES.detached");
    assert.equal(signer!.certificateFingerprint, sha256(rsa.certificateDer));
    assert.ok(Math.abs(Date.parse(signer!.signedAt) - SIGNING_TIME.getTime()) < 1000, signer!.signedAt);
    // no trust anchors configured: intact, but nobody vouches for the key
    assert.deepEqual([signer!.level, signer!.indication, signer!.subIndication], ["B-B", "INDETERMINATE", "NO_CERTIFICATE_CHAIN_FOUND"]);
    assert.equal(signer!.revocation, "not checked (a self-signed certificate)");
  });

  test("an EC key works, and the name falls back to the certificate CN without /Name", async () => {
    const pdf = await signPdf(await textPdf(1), ec, { signerName: "", signingTime: SIGNING_TIME });
    const result = await verifyPdfSignatures(pdf);
    assert.equal(result.valid, true, result.reason);
    assert.equal(result.signers[0]!.certificateFingerprint, sha256(ec.certificateDer));
    assert.equal(result.signers[0]!.name, "Bob Example");
  });

  test("one byte changed inside a signed range: not valid, with a clear reason", async () => {
    const tampered = Buffer.from(signed);
    // the binary comment on the header's second line: pdf-lib still reads the file
    assert.equal(tampered.subarray(0, 5).toString("latin1"), "%PDF-");
    tampered[11]! ^= 0x01;
    const result = await verifyPdfSignatures(tampered);
    assert.equal(result.valid, false);
    assert.equal(result.signers[0]!.intact, false);
    assert.equal(result.reason, "Signature 1 does not match the document: it was changed after signing.");
  });

  test("a changed signature value: not intact", async () => {
    const text = signed.toString("latin1");
    const [, , second] = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)/.exec(text)!.slice(1).map(Number) as number[];
    const tampered = Buffer.from(signed);
    // the CMS ends with the signature value; change a hex digit of it (before the zero padding)
    const hex = tampered.subarray(0, second! - 1).toString("latin1");
    const lastNonZero = hex.search(/0*$/) - 1;
    tampered[lastNonZero] = tampered[lastNonZero] === 0x31 ? 0x32 : 0x31;
    const result = await verifyPdfSignatures(tampered);
    assert.equal(result.valid, false);
    assert.equal(result.signers[0]!.intact, false);
    assert.match(result.reason, /^Signature 1 does not match the document: /);
  });

  test("bytes appended after the signed file: not valid, not covering the whole document", async () => {
    const junk = Buffer.from("%%EOF\n% junk\n", "latin1");
    const result = await verifyPdfSignatures(Buffer.concat([signed, junk]));
    assert.equal(result.valid, false);
    assert.equal(result.signers[0]!.intact, true);
    assert.equal(result.signers[0]!.coversWholeDocument, false);
    assert.equal(result.signers[0]!.laterChangesPermitted, false);
    assert.equal(result.signers[0]!.indication, "TOTAL-FAILED");
    assert.match(result.reason, /^The document was modified after signature 1: .*bytes were appended that are not an incremental update/);
  });

  test("an unsigned PDF has no signature", async () => {
    const pdf = await textPdf(3);
    const result = await verifyPdfSignatures(pdf);
    assert.equal(result.valid, false);
    assert.equal(result.reason, "The document has no signature.");
    assert.deepEqual(result.signers, []);
    assert.deepEqual(result.document, { sha256: sha256(pdf), pages: 3 });
  });

  test("an encrypted PDF, or one whose trailer has no /Root, is UNPROCESSABLE_DOCUMENT, not a document without signature", async () => {
    const encrypted = await pdfWithTrailer((document) => {
      document.context.trailerInfo.Encrypt = document.context.register(document.context.obj({ Filter: "Standard", V: 5, R: 6 }));
    });
    await assert.rejects(verifyPdfSignatures(encrypted), unprocessable(/encrypted/));
    // pdf-lib would find the catalog by its /Type and read the pages; signing would not read the file
    const rootless = await pdfWithTrailer((document) => {
      document.context.trailerInfo.Root = undefined as never;
    });
    await assert.rejects(verifyPdfSignatures(rootless), unprocessable(/damaged or truncated/));
  });

  test("bytes that are not a PDF are UNPROCESSABLE_DOCUMENT", async () => {
    for (const garbage of [Buffer.from("this is not a PDF at all\n"), Buffer.alloc(0), Buffer.from("%PDF-1.7\ngarbage")]) {
      await assert.rejects(verifyPdfSignatures(garbage), (error: unknown) => {
        assert.ok(error instanceof ServiceError, String(error));
        assert.equal(error.code, "UNPROCESSABLE_DOCUMENT");
        return true;
      });
    }
  });

  test("trust: the signer's own self-signed certificate as root is trusted, an unrelated root is not", async () => {
    const trusted = await verifyPdfSignatures(signed, { trustedRootsDer: [unrelated.certificateDer, rsa.certificateDer] });
    assert.equal(trusted.valid, true, trusted.reason);
    assert.equal(trusted.signers[0]!.problem, undefined);
    assert.deepEqual([trusted.signers[0]!.indication, trusted.signers[0]!.revocation], ["TOTAL-PASSED", "not needed (the signer is a trust anchor)"]);

    const untrusted = await verifyPdfSignatures(signed, { trustedRootsDer: [unrelated.certificateDer] });
    assert.equal(untrusted.valid, false);
    assert.equal(untrusted.signers[0]!.intact, true);
    assert.equal(untrusted.signers[0]!.problem, "not trusted");
    assert.match(untrusted.reason, /not trusted/);
  });

  test("trust: a certificate issued by a CA verifies up to that CA as root", async () => {
    const directory = join(root, "pki");
    mkdirSync(directory);
    createTestPki(directory, "ec");
    const read = (name: string) => readFileSync(join(directory, name));
    const rootDer = Buffer.from(new X509Certificate(read(TEST_PKI.rootCertificate)).raw);
    const withChain = await loadLocalKeyFromFiles({
      keyPem: read(TEST_PKI.signerKey),
      certificatePem: read(TEST_PKI.signerCertificate),
      chainPem: read(TEST_PKI.rootCertificate),
    });
    const withoutChain = await loadLocalKeyFromFiles({
      keyPem: read(TEST_PKI.signerKey),
      certificatePem: read(TEST_PKI.signerCertificate),
    });
    for (const key of [withChain, withoutChain]) {
      const pdf = await signPdf(await textPdf(1), key, { signerName: "", signingTime: SIGNING_TIME });
      const result = await verifyPdfSignatures(pdf, { trustedRootsDer: [rootDer] });
      assert.equal(result.valid, true, result.reason);
      assert.equal(result.signers[0]!.name, "Test signer (ec)");
      const untrusted = await verifyPdfSignatures(pdf, { trustedRootsDer: [unrelated.certificateDer] });
      assert.equal(untrusted.signers[0]!.problem, "not trusted");
    }
  });
});
