// CRLs made by `openssl ca -gencrl` from the CA's database: revoked serial
// numbers found (one with its high bit set, so encoded with a leading zero),
// the update times as openssl prints them, and CRLs that are not the
// issuer's or whose signature was altered refused.
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createDatabaseCa, pemToDer, type DatabaseCa, type Validity } from "../../../test/support/openssl-ca.js";
import { newKeyArgs, openssl } from "../../../test/support/openssl.js";
import { parseCertificate, type Certificate } from "./certificate.js";
import { crlStatus } from "./crl.js";

const root = mkdtempSync(join(tmpdir(), "docservice-crl-"));
const HOUR = 3_600_000;
const validity = (): Validity => ({ notBefore: new Date(Date.now() - HOUR), notAfter: new Date(Date.now() + 24 * HOUR) });
const HIGH_SERIAL = "80AB0000000000000000000000000000000001";
const SIGNER = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature"];
const certificate = (file: string) => parseCertificate(pemToDer(readFileSync(file, "utf8")));

/** A certificate of `ca` with the given serial (openssl ca only makes random ones), entered revoked in its database. */
function revokedWithSerial(ca: DatabaseCa, dir: string, serialHex: string): Certificate {
  openssl(["req", "-new", ...newKeyArgs("ec"), "-nodes", "-keyout", "high.key", "-out", "high.csr", "-subj", "/CN=High serial"], dir);
  openssl(["x509", "-req", "-in", "high.csr", "-CA", ca.ca.cert, "-CAkey", ca.ca.key, "-set_serial", `0x${serialHex}`, "-days", "1", "-out", "high.pem"], dir);
  // index.txt: status, expiry, revocation time[,reason], serial, file, subject
  appendFileSync(ca.index, `R\t491231235959Z\t250101000000Z,keyCompromise\t${serialHex}\tunknown\t/CN=High serial\n`);
  return certificate(join(dir, "high.pem"));
}

describe("crlStatus", () => {
  let ca: DatabaseCa;
  let other: DatabaseCa;
  let good: Certificate;
  let revoked: Certificate;
  let high: Certificate;
  let crl: Buffer;

  before(async () => {
    ca = await createDatabaseCa(join(root, "ca"), { subject: "/CN=CRL test CA", keyType: "ec", validity: validity(), extensions: ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"] });
    other = await createDatabaseCa(join(root, "other"), { subject: "/CN=CRL test CA", keyType: "ec", validity: validity(), extensions: ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"] });
    good = certificate((await ca.issue("good", "/CN=Good", SIGNER, "ec", validity())).cert);
    const revokedFiles = await ca.issue("revoked", "/CN=Revoked", SIGNER, "ec", validity());
    await ca.revoke(revokedFiles.cert, "keyCompromise");
    revoked = certificate(revokedFiles.cert);
    high = revokedWithSerial(ca, join(root, "ca"), HIGH_SERIAL);
    crl = await ca.crl();
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test("a revoked certificate: revoked at the time the CA's database holds", () => {
    const serial = revoked.serialNumber.toString("hex").toUpperCase();
    assert.equal(crlStatus(crl, revoked, certificate(ca.ca.cert)).revokedAt?.toISOString(), ca.revocationOf(serial)!.time.toISOString());
  });

  test("a serial number with its high bit set (INTEGER 00 80 AB …) is found; one differing in its last byte is not", () => {
    assert.equal(high.serialNumber[0], 0, "the INTEGER carries a leading zero");
    assert.equal(crlStatus(crl, high, certificate(ca.ca.cert)).revokedAt?.toISOString(), ca.revocationOf(HIGH_SERIAL)!.time.toISOString());
    assert.equal(crlStatus(crl, good, certificate(ca.ca.cert)).revokedAt, undefined);
    const near = { ...high, serialNumber: Buffer.from(high.serialNumber) };
    near.serialNumber[near.serialNumber.length - 1]! ^= 1;
    assert.equal(crlStatus(crl, near, certificate(ca.ca.cert)).revokedAt, undefined);
  });

  test("thisUpdate and nextUpdate are the times openssl crl prints", () => {
    writeFileSync(join(root, "crl.der"), crl);
    const printed = openssl(["crl", "-inform", "DER", "-in", "crl.der", "-noout", "-lastupdate", "-nextupdate"], root);
    const time = (field: string) => new Date(new RegExp(`${field}=(.+)`).exec(printed)![1]!).toISOString();
    const status = crlStatus(crl, good, certificate(ca.ca.cert));
    assert.deepEqual([status.source, status.thisUpdate.toISOString(), status.nextUpdate?.toISOString()], ["CRL", time("lastUpdate"), time("nextUpdate")]);
  });

  test("a CRL of another CA with the same name but another key is refused; so is one whose signature was altered", () => {
    assert.throws(() => crlStatus(crl, good, certificate(other.ca.cert)), /the CRL's signature does not verify against the issuer/);
    assert.throws(() => crlStatus(crl, good, good), /the CRL is not the issuer's/);
    const altered = Buffer.from(crl);
    altered[altered.length - 3]! ^= 1;
    assert.throws(() => crlStatus(altered, good, certificate(ca.ca.cert)), /the CRL's signature does not verify against the issuer/);
  });
});
