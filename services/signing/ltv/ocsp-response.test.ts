// OCSP responses made by `openssl ocsp` from a CA's database (a root, an
// intermediate under it, end entities of the intermediate): who may sign
// them (the issuing CA itself or a responder it delegated to with
// id-kp-OCSPSigning, valid now), the status and times as openssl prints
// them, and responses that are not sound answers refused.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createDatabaseCa, pemToDer, type CertFiles, type DatabaseCa, type Validity } from "../../../test/support/openssl-ca.js";
import { openssl, opensslAsync } from "../../../test/support/openssl.js";
import { parseCertificate, type Certificate } from "./certificate.js";
import { ocspRequest } from "./ocsp-cert-id.js";
import { ocspStatus } from "./ocsp-response.js";

const root = mkdtempSync(join(tmpdir(), "docservice-ocsp-response-"));
const HOUR = 3_600_000;
const validFor = (from: number, to: number): Validity => ({ notBefore: new Date(Date.now() + from * HOUR), notAfter: new Date(Date.now() + to * HOUR) });
const CA = ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"];
const END_ENTITY = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature"];
const RESPONDER = [...END_ENTITY, "extendedKeyUsage=OCSPSigning"];
const certificate = (files: CertFiles) => parseCertificate(pemToDer(readFileSync(files.cert, "utf8")));

/** What `openssl ocsp -resp_text` prints about a response: "This Update", "Next Update", "Revocation Time". */
function printed(response: Buffer, field: string): string | undefined {
  writeFileSync(join(root, "response.der"), response);
  const text = openssl(["ocsp", "-respin", "response.der", "-resp_text", "-noverify"], root);
  const value = new RegExp(`${field}: (.+)`).exec(text)?.[1];
  return value === undefined ? undefined : new Date(value).toISOString();
}

describe("ocspStatus", () => {
  let rootCa: DatabaseCa;
  let ca: DatabaseCa;
  let issuer: Certificate;
  let files: Record<"responder" | "expiredResponder" | "plain" | "good" | "revoked", CertFiles>;
  let good: Certificate;
  let revoked: Certificate;

  /** A response of `ca`'s database about `subject`, signed with `signer`; `options`: more `openssl ocsp` options. */
  async function response(subject: Certificate, signer: CertFiles, options: string[] = []): Promise<Buffer> {
    writeFileSync(join(root, "request.der"), ocspRequest(subject, issuer));
    await opensslAsync(
      ["ocsp", "-index", ca.index, "-CA", ca.ca.cert, "-rsigner", signer.cert, "-rkey", signer.key, ...options, "-reqin", "request.der", "-respout", "response.der"],
      root,
    );
    return readFileSync(join(root, "response.der"));
  }

  before(async () => {
    rootCa = await createDatabaseCa(join(root, "root"), { subject: "/CN=OCSP test root", keyType: "ec", validity: validFor(-1, 48), extensions: CA });
    ca = await createDatabaseCa(join(root, "intermediate"), {
      subject: "/CN=OCSP test intermediate",
      keyType: "rsa",
      validity: validFor(-1, 48),
      extensions: CA,
      issuer: { ca: rootCa, name: "intermediate" },
    });
    issuer = certificate(ca.ca);
    files = {
      responder: await ca.issue("responder", "/CN=OCSP responder", RESPONDER, "ec", validFor(-1, 24)),
      expiredResponder: await ca.issue("expired", "/CN=Expired OCSP responder", RESPONDER, "ec", validFor(-48, -24)),
      plain: await ca.issue("plain", "/CN=Not a responder", END_ENTITY, "ec", validFor(-1, 24)),
      good: await ca.issue("good", "/CN=Good", END_ENTITY, "ec", validFor(-1, 24)),
      revoked: await ca.issue("revoked", "/CN=Revoked", END_ENTITY, "ec", validFor(-1, 24)),
    };
    await ca.revoke(files.revoked.cert, "keyCompromise");
    good = certificate(files.good);
    revoked = certificate(files.revoked);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test("a delegated responder's answer: good, with the times openssl prints, carrying the responder's certificate", async () => {
    const bytes = await response(good, files.responder);
    const status = ocspStatus(bytes, good, issuer);
    assert.deepEqual(
      [status.source, status.revokedAt, status.thisUpdate.toISOString(), status.nextUpdate?.toISOString()],
      ["OCSP", undefined, printed(bytes, "This Update"), printed(bytes, "Next Update")],
    );
    assert.deepEqual(status.responderCertificates, [certificate(files.responder).der]);
  });

  test("a revoked certificate: revoked at the time openssl prints, the CA database's", async () => {
    const bytes = await response(revoked, files.responder);
    const revokedAt = ocspStatus(bytes, revoked, issuer).revokedAt?.toISOString();
    assert.equal(revokedAt, printed(bytes, "Revocation Time"));
    assert.equal(revokedAt, ca.revocationOf(revoked.serialNumber.toString("hex"))!.time.toISOString());
  });

  test("signed by the issuing CA itself (not a self-signed one), or naming its responder by key hash: accepted", async () => {
    assert.equal(ocspStatus(await response(good, ca.ca), good, issuer).source, "OCSP");
    assert.equal(ocspStatus(await response(good, files.responder, ["-resp_key_id"]), good, issuer).source, "OCSP");
  });

  test("refused: a signer without id-kp-OCSPSigning, an expired responder, no responder certificate, an altered signature", async () => {
    const notDelegated = await response(good, files.plain);
    assert.throws(() => ocspStatus(notDelegated, good, issuer), /neither the issuer nor a responder it delegated to/);
    const expired = await response(good, files.expiredResponder);
    assert.throws(() => ocspStatus(expired, good, issuer), /not valid now/);
    const withoutCertificates = await response(good, files.responder, ["-resp_no_certs"]);
    assert.throws(() => ocspStatus(withoutCertificates, good, issuer), /carries no certificate of its responder/);
    const altered = await response(good, files.responder);
    // the last digit of the signed producedAt, the first GeneralizedTime (tag 0x18, 15 characters)
    altered[altered.indexOf(Buffer.from([0x18, 0x0f])) + 2 + 13]! ^= 1;
    assert.throws(() => ocspStatus(altered, good, issuer), /signature does not verify against the issuer/);
  });

  test("refused: checked against another issuer, or about another certificate", async () => {
    const bytes = await response(good, files.responder);
    assert.throws(() => ocspStatus(bytes, good, certificate(rootCa.ca)), /neither the issuer nor issued by it/);
    assert.throws(() => ocspStatus(bytes, revoked, issuer), /not about this certificate/);
  });
});
