// The OCSP request and CertID against OpenSSL's (`openssl ocsp -reqout`), for
// EC and RSA issuers: the issuer's Name as encoded and its key's BIT STRING
// bytes (without the unused-bits count) hashed, the serial number as encoded.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createDatabaseCa, pemToDer, type CertFiles } from "../../../test/support/openssl-ca.js";
import { openssl, type TestKeyType } from "../../../test/support/openssl.js";
import { children, fromDerPrefix } from "../cms/asn1.js";
import { parseCertificate, type Certificate } from "./certificate.js";
import { identifies, ocspRequest, readCertId } from "./ocsp-cert-id.js";

const root = mkdtempSync(join(tmpdir(), "docservice-ocsp-cert-id-"));
after(() => rmSync(root, { recursive: true, force: true }));

const HOUR = 3_600_000;
const CA = ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"];

interface Pki {
  dir: string;
  /** An intermediate CA: its Name differs from its issuer's. */
  issuer: CertFiles;
  leaf: CertFiles;
}

async function pki(type: TestKeyType): Promise<Pki> {
  const validity = { notBefore: new Date(Date.now() - HOUR), notAfter: new Date(Date.now() + 24 * HOUR) };
  const dir = join(root, type);
  const rootCa = await createDatabaseCa(join(dir, "root"), { subject: `/CN=CertID root (${type})`, keyType: type, validity, extensions: CA });
  const ca = await createDatabaseCa(join(dir, "intermediate"), { subject: `/O=DocService tests/CN=CertID intermediate (${type})`, keyType: type, validity, extensions: CA, issuer: { ca: rootCa, name: "intermediate" } });
  const leaf = await ca.issue("leaf", "/CN=CertID leaf", ["basicConstraints=critical,CA:FALSE"], type, validity);
  return { dir, issuer: ca.ca, leaf };
}

const read = (files: CertFiles): Certificate => parseCertificate(pemToDer(readFileSync(files.cert, "utf8")));

/** `openssl ocsp` writes a request for the leaf without sending it; `digest` picks the CertID hash. */
function opensslRequest({ dir, issuer, leaf }: Pki, digest: string[] = []): Buffer {
  openssl(["ocsp", "-issuer", issuer.cert, ...digest, "-cert", leaf.cert, "-no_nonce", "-reqout", "request.der"], dir);
  return readFileSync(join(dir, "request.der"));
}

/** OCSPRequest { TBSRequest { requestList { Request { reqCert } } } }. */
function requestCertId(request: Buffer) {
  const [tbsRequest] = children(fromDerPrefix(request, "OCSPRequest"), "OCSPRequest");
  const [requestList] = children(tbsRequest, "TBSRequest");
  const [first] = children(requestList, "requestList");
  return readCertId(children(first, "Request")[0]);
}

for (const type of ["ec", "rsa"] as const) {
  describe(`OCSP CertID, ${type.toUpperCase()} issuer`, () => {
    let made: Pki;
    before(async () => {
      made = await pki(type);
    });

    test("the request is byte for byte the one openssl ocsp writes without a nonce (SHA-1 CertID)", () => {
      assert.equal(ocspRequest(read(made.leaf), read(made.issuer)).toString("hex"), opensslRequest(made).toString("hex"));
    });

    test("a SHA-256 CertID of openssl's names the certificate, and no other certificate or issuer", () => {
      const id = requestCertId(opensslRequest(made, ["-sha256"]));
      assert.equal(id.issuerNameHash.length, 32);
      const [leaf, issuer] = [read(made.leaf), read(made.issuer)];
      assert.equal(identifies(id, leaf, issuer), true);
      assert.equal(identifies(id, issuer, issuer), false, "another serial number");
      assert.equal(identifies(id, leaf, leaf), false, "another issuer name and key");
    });

    test("a SHA-384 CertID is not matched (only SHA-1 and SHA-256 are)", () => {
      assert.equal(identifies(requestCertId(opensslRequest(made, ["-sha384"])), read(made.leaf), read(made.issuer)), false);
    });
  });
}
