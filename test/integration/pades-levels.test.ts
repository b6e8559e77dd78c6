/**
 * PAdES B-B, B-T, B-LT and B-LTA from the signing job, against a real PKI
 * (root, intermediate, OCSP responders, CRLs, a TSA; test/support/test-pki.ts),
 * judged by EU DSS (test/support/dss-validator.ts) with the PKI's root as the
 * only trust anchor; countersigning by a second key in SoftHSM2; a revoked
 * signer; revocation data or the TSA unavailable → 503.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ServiceError } from "../../services/core/errors.js";
import { loadLocalKeyFromFiles } from "../../services/signing/keys/local-key.js";
import { openPkcs11Key } from "../../services/signing/keys/pkcs11/pkcs11-key.js";
import type { SigningKey } from "../../services/signing/keys/signing-key.js";
import { extendArchive } from "../../services/signing/ltv/archive-extension.js";
import { RevocationSource } from "../../services/signing/ltv/revocation.js";
import { TimestampAuthority } from "../../services/signing/ltv/timestamp-authority.js";
import { SIGNATURE_LEVELS, type SignatureLevel } from "../../services/signing/model.js";
import { verifyPdfSignatures } from "../../services/signing/pdf/pdf-verifier.js";
import { pemToDer } from "../support/openssl-ca.js";
import { runSigningJob, type SigningJob } from "../../services/signing/workers/signing-job.js";
import { validateWithDss } from "../support/dss-validator.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { tool } from "../support/pdf-tools.js";
import { pyhankoCommand } from "../support/pdf-validators.js";
import { importIntoSoftHsm } from "../support/softhsm-import.js";
import { createSoftHsmToken, type SoftHsmToken } from "../support/softhsm.js";
import { startTestPki, type TestPki, type TestPkiCertificate } from "../support/test-pki.js";
import { startTestTsa, type TestTsa } from "../support/tsa.js";

const work = mkdtempSync(join(tmpdir(), "docservice-pades-levels-"));
let counter = 0;

function job(pdf: Buffer, level: SignatureLevel, name = "Ada Lovelace"): SigningJob {
  return {
    pdf,
    documentId: `doc-${++counter}`,
    documentSha256: "0".repeat(64),
    signer: { name, email: "ada@example.com" },
    events: [{ type: "submit", timestamp: new Date() }],
    signedAt: new Date(),
    certificatePage: true,
    level,
  };
}

function localKey(certificate: TestPkiCertificate): Promise<SigningKey> {
  return loadLocalKeyFromFiles({
    keyPem: readFileSync(certificate.key),
    certificatePem: readFileSync(certificate.cert),
    chainPem: readFileSync(certificate.chain),
  });
}

const EXPECTED_FORMAT: Record<SignatureLevel, string> = {
  "B-B": "PAdES-BASELINE-B",
  "B-T": "PAdES-BASELINE-T",
  "B-LT": "PAdES-BASELINE-LT",
  "B-LTA": "PAdES-BASELINE-LTA",
};

describe("PAdES levels judged by EU DSS", () => {
  let pki: TestPki;
  let tsa: TestTsa;
  let services: { timestampAuthority: TimestampAuthority; revocation: RevocationSource };
  let signerA: SigningKey;
  let token: SoftHsmToken;
  let signerB: SigningKey;

  before(async () => {
    pki = await startTestPki();
    tsa = await startTestTsa({ signer: pki.tsa });
    services = {
      timestampAuthority: new TimestampAuthority({ url: tsa.url, timeoutMs: 10_000 }),
      // the PKI's servers are on loopback: allowed here as an operator would allow an internal CA
      revocation: new RevocationSource({ timeoutMs: 5000, allowHosts: ["127.0.0.1"], cacheMs: 0 }),
    };
    signerA = await localKey(pki.signerA);
    token = await createSoftHsmToken();
    await importIntoSoftHsm(token, pki.signerB, { label: "signer-b", id: "b1" });
    signerB = await openPkcs11Key({ modulePath: token.modulePath, tokenLabel: token.tokenLabel, pin: token.userPin, keyLabel: "signer-b", poolSize: 1 });
  });

  after(async () => {
    await signerB?.close();
    await token?.cleanup();
    await tsa?.stop();
    await pki?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const verify = (pdf: Buffer) => verifyPdfSignatures(pdf, { trustedRootsDer: [pemToDer(readFileSync(pki.root.cert, "utf8"))], revocation: services.revocation });

  let lastFile = "";
  const dss = async (pdf: Buffer, name: string) => {
    const path = (lastFile = join(work, `${++counter}-${name}.pdf`));
    writeFileSync(path, pdf);
    return validateWithDss(path, { trust: [pki.root.cert], allowOnline: true });
  };

  for (const level of SIGNATURE_LEVELS) {
    test(`${level}: DSS says TOTAL_PASSED and ${EXPECTED_FORMAT[level]}`, async () => {
      const signed = await runSigningJob(job(await textPdf(2), level), signerA, services);
      const report = await dss(signed, level);
      assert.equal(report.signatures.length, 1, report.log);
      const [signature] = report.signatures;
      assert.equal(signature!.indication, "TOTAL_PASSED", JSON.stringify(signature, null, 1));
      assert.equal(signature!.signatureFormat, EXPECTED_FORMAT[level]);
      const ours = await verify(signed);
      assert.equal(ours.valid, true, ours.reason);
      const [mine] = ours.signers;
      assert.deepEqual([mine!.indication, mine!.level], ["TOTAL-PASSED", level], JSON.stringify(mine, null, 1));
      assert.equal(mine!.timestampTime !== "", level !== "B-B");
      if (level === "B-LT" || level === "B-LTA") assert.match(mine!.revocation, /good \(OCSP, embedded\)/);
      // pyhanko-cli 0.38 has no --ltv-profile; --force-revinfo makes it require revocation data for the chain
      const pyhanko = await tool(pyhankoCommand(), ["sign", "validate", "--pretty-print", "--force-revinfo", "--trust", pki.root.cert, "--trust-replace", lastFile]);
      assert.equal(pyhanko.code, 0, pyhanko.stdout + pyhanko.stderr);
      assert.match(pyhanko.stdout, /The signature is judged VALID\./);
    });
  }

  test("B-LTA appended in place, as a worker signs an upload (in a resizable ArrayBuffer it owns): no copy, the received bytes kept, DSS TOTAL_PASSED", async () => {
    const received = await textPdf(2);
    const ResizableArrayBuffer = ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => ArrayBuffer;
    const upload = Buffer.from(new ResizableArrayBuffer(received.length, { maxByteLength: received.length + 1024 * 1024 }), 0, received.length);
    received.copy(upload);
    const signed = await runSigningJob(job(upload, "B-LTA"), signerA, services, { ownsPdf: true });
    assert.equal(signed.buffer, upload.buffer, "appended in the upload's ArrayBuffer");
    assert.equal(signed.buffer.byteLength, signed.length, "which the result fills, to move to another thread whole");
    assert.ok(upload.equals(received) && signed.subarray(0, received.length).equals(received), "the received bytes kept");
    const report = await dss(Buffer.from(signed), "in-place");
    assert.equal(report.signatures.length, 1, report.log);
    assert.equal(report.signatures[0]!.indication, "TOTAL_PASSED", JSON.stringify(report.signatures[0], null, 1));
    assert.equal(report.signatures[0]!.signatureFormat, "PAdES-BASELINE-LTA");
    const ours = await verify(signed);
    assert.equal(ours.valid, true, ours.reason);
    assert.deepEqual(ours.signers.map((signer) => [signer.kind, signer.indication]), [["signature", "TOTAL-PASSED"], ["document-timestamp", "TOTAL-PASSED"]]);
  });

  test("countersigned at B-LTA by a SoftHSM2 key after a local key's B-LT: both TOTAL_PASSED, the first revision unchanged", async () => {
    const first = await runSigningJob(job(await textPdf(1), "B-LT", "Customer"), signerA, services);
    const second = await runSigningJob(job(first, "B-LTA", "Company"), signerB, services);
    assert.ok(second.subarray(0, first.length).equals(first));
    const report = await dss(second, "countersigned");
    assert.equal(report.signatures.length, 2, report.log);
    for (const signature of report.signatures) {
      assert.equal(signature.indication, "TOTAL_PASSED", JSON.stringify(signature, null, 1));
    }
    const ours = await verify(second);
    assert.equal(ours.valid, true, ours.reason);
    const signatures = ours.signers.filter((signer) => signer.kind === "signature");
    assert.deepEqual(signatures.map((signer) => [signer.indication, signer.level, signer.laterChangesPermitted]), [["TOTAL-PASSED", "B-LTA", true], ["TOTAL-PASSED", "B-LTA", true]]);
    // revisions: 1 the document, 2 the customer's signature, 3 its DSS, 4 the company's signature, 5 its DSS, 6 the document timestamp
    assert.deepEqual(signatures.map((signer) => signer.revision), [2, 4]);
    assert.deepEqual(ours.signers.map((signer) => signer.kind), ["signature", "signature", "document-timestamp"]);
    // the company's document timestamp covers the customer's signature and its DSS too: both reach LTA
    assert.deepEqual(report.signatures.map((signature) => signature.signatureFormat), ["PAdES-BASELINE-LTA", "PAdES-BASELINE-LTA"]);
  });

  test("extending an archived B-LTA document: fresh validation data for every timestamp's TSA, a new document timestamp, still TOTAL_PASSED", async () => {
    const archived = await runSigningJob(job(await textPdf(1), "B-LTA"), signerA, services);
    const requestsBefore = pki.requests.ocsp;
    const extended = await extendArchive(archived, services);
    assert.ok(extended.subarray(0, archived.length).equals(archived));
    assert.ok(pki.requests.ocsp > requestsBefore, "revocation data was fetched again");
    const report = await dss(extended, "extended");
    assert.equal(report.signatures[0]!.indication, "TOTAL_PASSED", JSON.stringify(report.signatures[0], null, 1));
    assert.equal(report.signatures[0]!.signatureFormat, "PAdES-BASELINE-LTA");
    const ours = await verify(extended);
    assert.equal(ours.valid, true, ours.reason);
    assert.deepEqual(ours.signers.map((signer) => signer.kind), ["signature", "document-timestamp", "document-timestamp"]);
    assert.ok(ours.signers.every((signer) => signer.indication === "TOTAL-PASSED" && signer.laterChangesPermitted), JSON.stringify(ours.signers, null, 1));
    const unsigned = await extendArchive(await textPdf(1), services).then(() => undefined, (error: unknown) => error);
    assert.ok(unsigned instanceof ServiceError && unsigned.code === "UNPROCESSABLE_DOCUMENT");
  });

  test("a revoked signer: signing at B-LT fails closed (503); a B-B signature is not TOTAL_PASSED for DSS", async () => {
    const revoked = await localKey(pki.revoked);
    const error = await runSigningJob(job(await textPdf(1), "B-LT"), revoked, services).then(
      () => assert.fail("signed with a revoked certificate"),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof ServiceError && error.code === "UNAVAILABLE", String(error));
    assert.match(error.message, /revoked/);
    const signed = await runSigningJob(job(await textPdf(1), "B-B"), revoked, services);
    const report = await dss(signed, "revoked");
    assert.notEqual(report.signatures[0]!.indication, "TOTAL_PASSED", JSON.stringify(report.signatures[0], null, 1));
    assert.match(`${report.signatures[0]!.indication} ${report.signatures[0]!.subIndication}`, /TOTAL_FAILED|INDETERMINATE/);
    const [mine] = (await verify(signed)).signers;
    assert.deepEqual([mine!.indication, mine!.subIndication], [report.signatures[0]!.indication!.replace("_", "-"), report.signatures[0]!.subIndication]);
  });

  test("OCSP and CRL down → 503 naming both; TSA down → 503; nothing weaker is returned", async () => {
    await pki.stopRevocationServices();
    try {
      const error = await runSigningJob(job(await textPdf(1), "B-LT"), signerA, services).then(
        () => assert.fail("signed B-LT without revocation data"),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof ServiceError && error.code === "UNAVAILABLE", String(error));
      assert.match(error.message, /No revocation data[\s\S]*OCSP[\s\S]*CRL/);
    } finally {
      await pki.startRevocationServices();
    }
    tsa.misbehave({ httpStatus: 500 });
    try {
      const error = await runSigningJob(job(await textPdf(1), "B-T"), signerA, services).then(
        () => assert.fail("signed B-T without a timestamp"),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof ServiceError && error.code === "UNAVAILABLE", String(error));
    } finally {
      tsa.misbehave(undefined);
    }
  });
});
