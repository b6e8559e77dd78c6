// Smoke test of the DSS validator of the test environment (scripts/testenv/dss.sh,
// test/support/dss-validator.ts) on PDFs signed by signPdf: DSS's verdict for a
// good signature, a timestamped one, a foreign trust anchor, a tampered file.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { LOCAL_CERTIFICATE_FILE, loadLocalKeyFromFiles, loadOrCreateLocalKey } from "../../services/signing/keys/local-key.js";
import type { SigningKey } from "../../services/signing/keys/signing-key.js";
import { TimestampAuthority } from "../../services/signing/ltv/timestamp-authority.js";
import { signPdf } from "../../services/signing/pdf/pdf-signer.js";
import { validateWithDss, type DssReport } from "../support/dss-validator.js";
import { createOpensslCa, type OpensslCa } from "../support/openssl-ca.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { startTestTsa, type TestTsa } from "../support/tsa.js";

const root = mkdtempSync(join(tmpdir(), "docservice-dss-validator-"));

/** The report's only signature, with the report in the assertion message. */
function onlySignature(report: DssReport) {
  assert.equal(report.signatures.length, 1, JSON.stringify(report, null, 2));
  return report.signatures[0]!;
}

describe("DSS validates PDFs signed by signPdf", () => {
  /** A self-signed key: its own certificate is the trust anchor. */
  let key: SigningKey;
  let keyCertificate: string;
  let ca: OpensslCa;
  let tsa: TestTsa;
  let signed: string;

  const sign = async (name: string, signingKey: SigningKey, timestampAuthority?: TimestampAuthority): Promise<string> => {
    const pdf = await signPdf(await textPdf(2), signingKey, {
      signerName: "DocService DSS test",
      reason: "Testing",
      signingTime: new Date(),
      timestampAuthority,
    });
    const file = join(root, `${name}.pdf`);
    await writeFile(file, pdf);
    return file;
  };

  before(async () => {
    const directory = join(root, "local-key");
    key = await loadOrCreateLocalKey(directory, { algorithm: "ECDSA-P256", subject: "DocService DSS test signer" });
    keyCertificate = join(directory, LOCAL_CERTIFICATE_FILE);
    ca = createOpensslCa(root, "/O=DocService tests/CN=DSS test CA");
    tsa = await startTestTsa();
    signed = await sign("signed", key);
  });

  after(async () => {
    await key?.close();
    await tsa?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test("trusted signer: TOTAL_PASSED, PAdES-BASELINE-B, the whole file covered, nothing modified", async () => {
    const report = await validateWithDss(signed, { trust: [keyCertificate] });
    const signature = onlySignature(report);
    const context = JSON.stringify(report, null, 2);
    assert.equal(signature.indication, "TOTAL_PASSED", context);
    assert.equal(signature.subIndication, null);
    assert.equal(signature.signatureFormat, "PAdES-BASELINE-B");
    assert.deepEqual(signature.errors, []);
    assert.equal(signature.signedBy, "DocService DSS test signer");
    assert.deepEqual(signature.certificateChain.map((c) => c.trusted), [true]);
    assert.deepEqual(signature.signatureScopes.map((s) => [s.name, s.scope]), [["Full PDF", "FULL"]]);
    assert.equal(signature.validationProcesses.basic?.indication, "PASSED");
    assert.equal(signature.pdfRevision?.subFilter, "ETSI.CAdES.detached");
    assert.equal(signature.pdfRevision?.byteRangeValid, true);
    assert.equal(signature.pdfRevision?.modificationDetection.detected, false);
    assert.equal(signature.pdfRevision?.modificationDetection.objectModificationsDetected, false);
    assert.deepEqual(report.timestamps, []);
    assert.equal(report.validSignaturesCount, 1);
    assert.ok(report.validationPolicy?.name, context);
  });

  test("an unrelated trust anchor: INDETERMINATE, NO_CERTIFICATE_CHAIN_FOUND", async () => {
    const signature = onlySignature(await validateWithDss(signed, { trust: [ca.ca.cert] }));
    assert.equal(signature.indication, "INDETERMINATE");
    assert.equal(signature.subIndication, "NO_CERTIFICATE_CHAIN_FOUND");
    assert.deepEqual(signature.certificateChain.map((c) => c.trusted), [false]);
  });

  test("a byte changed inside the signed range: TOTAL_FAILED, HASH_FAILURE", async () => {
    const tampered = readFileSync(signed);
    const at = tampered.indexOf("/MediaBox [ 0 0 595 842 ]");
    assert.ok(at > 0, "the page's MediaBox is in the file");
    tampered.write("6", at + "/MediaBox [ 0 0 59".length, "latin1"); // 595 -> 596: same length, only the digest changes
    const file = join(root, "tampered.pdf");
    await writeFile(file, tampered);
    const signature = onlySignature(await validateWithDss(file, { trust: [keyCertificate] }));
    assert.equal(signature.indication, "TOTAL_FAILED");
    assert.equal(signature.subIndication, "HASH_FAILURE");
  });

  test("a signing certificate from a CA, no revocation source: INDETERMINATE (DSS's policy wants revocation data for the signer)", async () => {
    const signer = ca.issue("signer", "/O=DocService tests/CN=DSS test CA signer", [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature,nonRepudiation",
    ]);
    const caKey = await loadLocalKeyFromFiles({
      keyPem: readFileSync(signer.key),
      certificatePem: readFileSync(signer.cert),
      chainPem: readFileSync(ca.ca.cert),
    });
    try {
      const report = await validateWithDss(await sign("ca-signed", caKey), { trust: [ca.ca.cert] });
      const signature = onlySignature(report);
      assert.equal(signature.indication, "INDETERMINATE", JSON.stringify(report, null, 2));
      assert.equal(signature.subIndication, "CERTIFICATE_CHAIN_GENERAL_FAILURE", JSON.stringify(report, null, 2));
      assert.ok(signature.errors.some((e) => e.key === "BBB_XCV_IRDPFC_ANS"), "no revocation data found for the certificate");
      assert.deepEqual(signature.certificateChain.map((c) => c.trusted), [false, true]);
    } finally {
      await caKey.close();
    }
  });

  test("with the test TSA: PAdES-BASELINE-T; the timestamp counts once its TSA certificate is trusted", async () => {
    const file = await sign("timestamped", key, new TimestampAuthority({ url: tsa.url }));

    // The TSA's root as anchor: the TSA certificate has no revocation data, so the
    // timestamp stays INDETERMINATE and the best signature time is the validation time.
    const withRoot = await validateWithDss(file, { trust: [keyCertificate, tsa.caCertificatePath] });
    const signature = onlySignature(withRoot);
    assert.equal(signature.indication, "TOTAL_PASSED", JSON.stringify(withRoot, null, 2));
    assert.equal(signature.signatureFormat, "PAdES-BASELINE-T");
    assert.equal(withRoot.timestamps.length, 1);
    const [timestamp] = withRoot.timestamps;
    assert.deepEqual(signature.timestampIds, [timestamp!.id]);
    assert.equal(timestamp!.type, "SIGNATURE_TIMESTAMP");
    assert.equal(timestamp!.producedBy, "Test TSA");
    assert.equal(timestamp!.messageImprintIntact, true);
    assert.equal(timestamp!.indication, "INDETERMINATE", JSON.stringify(timestamp, null, 2));

    // The TSA certificate itself as anchor: the timestamp PASSES and is the best signature time.
    const withTsa = await validateWithDss(file, { trust: [keyCertificate, tsa.tsaCertificatePath] });
    const timestamped = onlySignature(withTsa);
    assert.equal(timestamped.indication, "TOTAL_PASSED", JSON.stringify(withTsa, null, 2));
    assert.equal(withTsa.timestamps[0]!.indication, "PASSED", JSON.stringify(withTsa, null, 2));
    assert.equal(timestamped.bestSignatureTime, withTsa.timestamps[0]!.productionTime);
  });

  test("--validation-time before the signer's certificate existed: TOTAL_FAILED, NOT_YET_VALID", async () => {
    const validationTime = new Date(Date.now() - 24 * 3600_000);
    const report = await validateWithDss(signed, { trust: [keyCertificate], validationTime });
    assert.equal(new Date(report.validationTime).getTime(), validationTime.getTime());
    const signature = onlySignature(report);
    assert.equal(signature.indication, "TOTAL_FAILED", JSON.stringify(report, null, 2));
    assert.equal(signature.subIndication, "NOT_YET_VALID");
  });

  test("a file that is not a PDF is an error, not a report", async () => {
    const file = join(root, "not-a.pdf");
    await writeFile(file, "plain text\n");
    await assert.rejects(validateWithDss(file, { trust: [keyCertificate] }), /exited 1: .*Not supported document/);
  });
});
