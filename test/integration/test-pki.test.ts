// The PKI of the long-term-validation tests (test/support/test-pki.ts) checked
// with tools that share no code with it: `openssl verify` with the CRLs its
// server hands out, `openssl ocsp` against its responder, `openssl ts -verify`
// for a TSA under it, pyHanko signing with revocation info fetched from it, and
// the signing key backends (local PEM files, SoftHSM2 over PKCS#11) loading
// its keys.
import assert from "node:assert/strict";
import { X509Certificate, randomBytes, verify } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { after, before, describe, test } from "node:test";
import { loadLocalKeyFromFiles } from "../../services/signing/keys/local-key.js";
import { openPkcs11Key } from "../../services/signing/keys/pkcs11/pkcs11-key.js";
import type { SigningKey } from "../../services/signing/keys/signing-key.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { tool } from "../support/pdf-tools.js";
import { canConnect } from "../support/wait.js";
import { pyhankoCommand } from "../support/pdf-validators.js";
import { importIntoSoftHsm } from "../support/softhsm-import.js";
import { createSoftHsmToken } from "../support/softhsm.js";
import { startTestPki, type TestPki, type TestPkiCertificate, type TestPkiName } from "../support/test-pki.js";
import { startTestTsa } from "../support/tsa.js";

const work = mkdtempSync(join(tmpdir(), "docservice-test-pki-test-"));
let counter = 0;
const file = (name: string, bytes: Buffer | string) => {
  const path = join(work, `${++counter}-${name}`);
  writeFileSync(path, bytes);
  return path;
};

const openssl = (args: string[]) => tool("openssl", args);
const x509 = (certificate: TestPkiCertificate) => new X509Certificate(readFileSync(certificate.cert));
const extension = async (certificate: TestPkiCertificate, name: string) => (await openssl(["x509", "-in", certificate.cert, "-noout", "-ext", name])).stdout;

/** Signs with the key and checks the signature with the certificate's public key. */
async function assertSignsFor(key: SigningKey, certificate: TestPkiCertificate): Promise<void> {
  const data = randomBytes(100);
  const signature = await key.sign(data);
  assert.ok(verify("sha256", data, { key: x509(certificate).publicKey, dsaEncoding: "der" }, signature));
}

describe("test PKI for long-term validation", () => {
  let pki: TestPki;
  let startupMs: number;

  before(async () => {
    const started = performance.now();
    pki = await startTestPki();
    startupMs = performance.now() - started;
  });
  after(async () => {
    await pki?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** Both CRLs, downloaded, as one PEM file for `openssl verify -CRLfile`. */
  async function downloadCrls(): Promise<string> {
    let pem = "";
    for (const url of [pki.urls.crl.root, pki.urls.crl.intermediate]) {
      const response = await fetch(url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("content-type"), "application/pkix-crl");
      const der = file("crl.der", Buffer.from(await response.arrayBuffer()));
      const converted = await openssl(["crl", "-inform", "DER", "-in", der]);
      assert.equal(converted.code, 0, converted.stderr);
      pem += converted.stdout;
    }
    return file("crls.pem", pem);
  }

  const verifyWithCrls = async (crls: string, certificate: TestPkiCertificate) =>
    openssl(["verify", "-crl_check_all", "-CRLfile", crls, "-CAfile", pki.root.cert, "-untrusted", pki.intermediate.cert, certificate.cert]);

  const ocspCheck = (certificate: TestPkiCertificate, issuer: TestPkiCertificate, url: string) =>
    openssl(["ocsp", "-issuer", issuer.cert, "-cert", certificate.cert, "-url", url, "-CAfile", pki.root.cert, "-resp_text"]);

  test("starts in well under 3 s with EC keys", (t) => {
    t.diagnostic(`startTestPki() took ${Math.round(startupMs)} ms`);
    assert.ok(startupMs < 3_000, `${Math.round(startupMs)} ms`);
  });

  test("the chain: root, intermediate, and end entities issued by the intermediate, valid from before now for days", () => {
    const root = x509(pki.root);
    const intermediate = x509(pki.intermediate);
    assert.ok(root.checkIssued(root) && root.verify(root.publicKey));
    assert.ok(intermediate.checkIssued(root) && intermediate.verify(root.publicKey));
    assert.ok(intermediate.ca);
    const leaves: TestPkiName[] = ["signerA", "signerB", "revoked", "tsa", "intermediateOcsp"];
    for (const name of leaves) {
      const certificate = x509(pki[name]);
      assert.ok(certificate.checkIssued(intermediate) && certificate.verify(intermediate.publicKey), name);
      assert.ok(!certificate.ca, name);
    }
    assert.ok(x509(pki.rootOcsp).verify(root.publicKey));

    const now = Date.now();
    for (const name of Object.keys(pki.urls.ocsp).concat(leaves, "rootOcsp") as TestPkiName[]) {
      const certificate = x509(pki[name]);
      assert.ok(certificate.validFromDate.getTime() <= now - 30 * 60_000, `${name} valid from ${certificate.validFrom}`);
      assert.ok(certificate.validToDate.getTime() >= now + 2 * 86_400_000, `${name} valid to ${certificate.validTo}`);
      assert.equal(certificate.serialNumber.toUpperCase(), pki[name].serial);
      assert.deepEqual(readFileSync(pki[name].certDer), certificate.raw, name);
    }
    assert.equal(readFileSync(pki.signerA.chain, "utf8"), readFileSync(pki.intermediate.cert, "utf8") + readFileSync(pki.root.cert, "utf8"));
    assert.equal(readFileSync(pki.intermediate.chain, "utf8"), readFileSync(pki.root.cert, "utf8"));
    assert.notEqual(x509(pki.signerA).publicKey.export({ format: "der", type: "spki" }).toString("hex"),
      x509(pki.signerB).publicKey.export({ format: "der", type: "spki" }).toString("hex"));
  });

  test("every issued certificate names its issuer's caIssuers, OCSP (not the responders) and CRL URLs", async () => {
    const issuedBy: [TestPkiName, "root" | "intermediate"][] = [
      ["intermediate", "root"], ["rootOcsp", "root"], ["intermediateOcsp", "intermediate"],
      ["signerA", "intermediate"], ["signerB", "intermediate"], ["revoked", "intermediate"], ["tsa", "intermediate"],
    ];
    for (const [name, ca] of issuedBy) {
      const responder = name.endsWith("Ocsp");
      const expected = [`CA Issuers - URI:${pki.urls.caIssuers[ca]}`, ...(responder ? [] : [`OCSP - URI:${pki.urls.ocsp[ca]}`])];
      assert.deepEqual(x509(pki[name]).infoAccess?.trim().split("\n").sort(), expected.sort(), name);
      assert.match(await extension(pki[name], "crlDistributionPoints"), new RegExp(`URI:${pki.urls.crl[ca]}\\n`), name);
    }
    assert.equal(x509(pki.root).infoAccess, undefined);
  });

  test("key usages: TSA critical timeStamping; responders OCSPSigning with ocsp-nocheck", async () => {
    assert.match(await extension(pki.tsa, "extendedKeyUsage"), /Extended Key Usage: critical\n\s+Time Stamping\n/);
    for (const responder of [pki.rootOcsp, pki.intermediateOcsp]) {
      assert.match(await extension(responder, "extendedKeyUsage"), /OCSP Signing/);
      assert.match(await extension(responder, "noCheck"), /OCSP No Check/);
    }
    assert.match(await extension(pki.signerA, "keyUsage"), /critical\n\s+Digital Signature, Non Repudiation\n/);
  });

  test("openssl verify -crl_check_all with the served CRLs: good chains pass, the revoked signer is revoked", async () => {
    const crls = await downloadCrls();
    for (const name of ["signerA", "signerB", "tsa", "intermediate"] as const) {
      const result = await verifyWithCrls(crls, pki[name]);
      assert.equal(result.code, 0, `${name}: ${result.stdout}${result.stderr}`);
      assert.match(result.stdout, /: OK\n/);
    }
    const revoked = await verifyWithCrls(crls, pki.revoked);
    assert.notEqual(revoked.code, 0);
    assert.match(revoked.stdout + revoked.stderr, /certificate revoked/);

    const intermediateCrl = file("intermediate.crl", Buffer.from(await (await fetch(pki.urls.crl.intermediate)).arrayBuffer()));
    const text = (await openssl(["crl", "-inform", "DER", "-in", intermediateCrl, "-noout", "-text"])).stdout;
    assert.match(text, /Next Update: /);
    assert.match(text, new RegExp(`Serial Number: ${pki.revoked.serial}\\n[^]*?Key Compromise`));
  });

  test("openssl ocsp: good and revoked, signed by the delegated responders, verified up to the root", async () => {
    const good = await ocspCheck(pki.signerA, pki.intermediate, pki.urls.ocsp.intermediate);
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stderr + good.stdout, /Response verify OK/);
    assert.match(good.stdout, new RegExp(`${pki.signerA.cert}: good\\n`));
    assert.match(good.stdout, /Responder Id: O = DocService tests, CN = DocService test intermediate OCSP responder\n/);
    assert.match(good.stdout, /Next Update: /);

    const revoked = await ocspCheck(pki.revoked, pki.intermediate, pki.urls.ocsp.intermediate);
    assert.match(revoked.stderr + revoked.stdout, /Response verify OK/);
    assert.match(revoked.stdout, new RegExp(`${pki.revoked.cert}: revoked\\n`));
    assert.match(revoked.stdout, /Reason: keyCompromise/);
    const revocation = pki.revocationOf("revoked");
    assert.equal(revocation?.reason, "keyCompromise");
    assert.equal(pki.revocationOf("signerA"), undefined);

    const intermediate = await ocspCheck(pki.intermediate, pki.root, pki.urls.ocsp.root);
    assert.match(intermediate.stderr + intermediate.stdout, /Response verify OK/);
    assert.match(intermediate.stdout, /: good\n/);
    assert.match(intermediate.stdout, /CN = DocService test root OCSP responder\n/);
  });

  test("OCSP over GET (RFC 6960 A.1) answers like POST", async () => {
    const request = file("request.der", "");
    const made = await openssl(["ocsp", "-issuer", pki.intermediate.cert, "-cert", pki.signerB.cert, "-reqout", request, "-no_nonce"]);
    assert.equal(made.code, 0, made.stderr);
    const encoded = encodeURIComponent(readFileSync(request).toString("base64"));
    const response = await fetch(`${pki.urls.ocsp.intermediate}/${encoded}`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/ocsp-response");
    const der = file("response.der", Buffer.from(await response.arrayBuffer()));
    const shown = await openssl(["ocsp", "-respin", der, "-resp_text", "-noverify"]);
    assert.match(shown.stdout, /Cert Status: good/);
    assert.match(shown.stdout, new RegExp(`Serial Number: ${pki.signerB.serial}`));
  });

  test("the caIssuers URLs serve the issuers' certificates (DER), followed from the signer up to the root", async () => {
    let certificate = x509(pki.signerA);
    for (const issuer of [pki.intermediate, pki.root]) {
      const url = certificate.infoAccess!.match(/CA Issuers - URI:(\S+)/)![1]!;
      const response = await fetch(url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("content-type"), "application/pkix-cert");
      const der = Buffer.from(await response.arrayBuffer());
      assert.deepEqual(der, readFileSync(issuer.certDer));
      certificate = new X509Certificate(der);
    }
    assert.equal((await fetch(pki.urls.caIssuers.root.replace("root.cer", "other.cer"))).status, 404);
  });

  test("stopped revocation services refuse connections; started again, they answer on the same URLs", async () => {
    const refused = async (url: string) => {
      await assert.rejects(fetch(url), TypeError, url);
      assert.equal(await canConnect(Number(new URL(url).port)), false, url);
    };
    await pki.stopRevocationServices();
    try {
      await refused(pki.urls.crl.intermediate);
      await refused(pki.urls.ocsp.intermediate);
      const ocsp = await ocspCheck(pki.signerA, pki.intermediate, pki.urls.ocsp.intermediate);
      assert.notEqual(ocsp.code, 0);
      assert.equal((await fetch(pki.urls.caIssuers.intermediate)).status, 200, "caIssuers stays up");

      await pki.startRevocationServices(["crl"]);
      assert.equal((await fetch(pki.urls.crl.intermediate)).status, 200);
      await refused(pki.urls.ocsp.intermediate);
    } finally {
      await pki.startRevocationServices();
    }
    const again = await ocspCheck(pki.signerA, pki.intermediate, pki.urls.ocsp.intermediate);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /: good\n/);
    assert.equal((await verifyWithCrls(await downloadCrls(), pki.signerA)).code, 0);
  });

  test("a TSA under the PKI: openssl ts -verify trusts its tokens through the root", async () => {
    const tsa = await startTestTsa({ signer: pki.tsa });
    try {
      assert.equal(tsa.caCertificatePem, readFileSync(pki.root.cert, "utf8"));
      assert.equal(tsa.tsaCertificatePath, pki.tsa.cert);
      const data = file("data.txt", "to be timestamped\n");
      const query = file("query.tsq", "");
      assert.equal((await openssl(["ts", "-query", "-data", data, "-sha256", "-cert", "-out", query])).code, 0);
      const response = await fetch(tsa.url, {
        method: "POST",
        headers: { "Content-Type": "application/timestamp-query" },
        body: readFileSync(query),
      });
      assert.equal(response.status, 200);
      const reply = file("reply.tsr", Buffer.from(await response.arrayBuffer()));
      const verified = await openssl(["ts", "-verify", "-in", reply, "-queryfile", query, "-CAfile", pki.root.cert]);
      assert.equal(verified.code, 0, verified.stdout + verified.stderr);
      assert.match(verified.stdout, /Verification: OK/);
    } finally {
      await tsa.stop();
    }
  });

  test("the local-key backend loads signer A from the PEM files, with the chain", async () => {
    const key = await loadLocalKeyFromFiles({
      keyPem: readFileSync(pki.signerA.key),
      certificatePem: readFileSync(pki.signerA.cert),
      chainPem: readFileSync(pki.signerA.chain),
    });
    try {
      assert.equal(key.algorithm, "ECDSA-P256");
      assert.deepEqual(key.certificateDer, readFileSync(pki.signerA.certDer));
      assert.deepEqual(key.chainDer, [readFileSync(pki.intermediate.certDer), readFileSync(pki.root.certDer)]);
      await assertSignsFor(key, pki.signerA);
    } finally {
      await key.close();
    }
  });

  test("SoftHSM2: signer B imported onto a token signs through the PKCS#11 backend", async (t) => {
    const started = performance.now();
    const token = await createSoftHsmToken({ tokenLabel: "test-pki" });
    try {
      await importIntoSoftHsm(token, pki.signerB, { label: "pki-signer-b", id: "b1" });
      t.diagnostic(`token made and signer imported in ${Math.round(performance.now() - started)} ms`);
      const listed = await tool("pkcs11-tool", ["--module", token.modulePath, "--token-label", token.tokenLabel, "--list-objects", "--type", "cert"]);
      assert.match(listed.stdout, /label:\s+pki-signer-b chain 1\n/);
      assert.match(listed.stdout, /label:\s+pki-signer-b chain 2\n/);
      const key = await openPkcs11Key({
        modulePath: token.modulePath,
        tokenLabel: token.tokenLabel,
        pin: token.userPin,
        keyLabel: "pki-signer-b",
        poolSize: 1,
      });
      try {
        assert.equal(key.algorithm, "ECDSA-P256");
        assert.deepEqual(key.certificateDer, readFileSync(pki.signerB.certDer));
        await assertSignsFor(key, pki.signerB);
      } finally {
        await key.close();
      }
    } finally {
      await token.cleanup();
    }
  });

  describe("pyHanko signs PAdES B-LT with revocation info fetched from the PKI", () => {
    let pdf: string;
    let tsaStop: () => Promise<void>;
    let tsaUrl: string;
    before(async () => {
      pdf = file("in.pdf", await textPdf(1));
      const tsa = await startTestTsa({ signer: pki.tsa });
      tsaStop = () => tsa.stop();
      tsaUrl = tsa.url;
    });
    after(async () => {
      await tsaStop?.();
    });

    const sign = (signer: TestPkiCertificate) => {
      const out = join(work, `${++counter}-signed.pdf`);
      const result = tool(pyhankoCommand(), [
        "--verbose", "sign", "addsig", "--field", "Signature1", "--use-pades", "--with-validation-info", "--timestamp-url", tsaUrl,
        "--trust", pki.root.cert, "--trust-replace",
        "pemder", "--key", signer.key, "--cert", signer.cert, "--chain", signer.chain, "--no-pass", pdf, out,
      ]);
      return result.then((done) => ({ ...done, out }));
    };
    const embedded = (path: string) => {
      const text = readFileSync(path).toString("latin1");
      return { ocsps: text.includes("/OCSPs"), crls: text.includes("/CRLs") };
    };

    test("signer A: OCSP fetched and embedded; the result validates with revocation checking", async () => {
      const before = pki.requests.ocsp;
      const signed = await sign(pki.signerA);
      assert.equal(signed.code, 0, signed.stderr);
      assert.ok(pki.requests.ocsp > before);
      assert.deepEqual(embedded(signed.out), { ocsps: true, crls: false });
      const validated = await tool(pyhankoCommand(), [
        "sign", "validate", "--pretty-print", "--force-revinfo", "--trust", pki.root.cert, "--trust-replace", signed.out,
      ]);
      assert.equal(validated.code, 0, validated.stdout + validated.stderr);
      assert.match(validated.stdout, /The signature is judged VALID\./);
      assert.match(validated.stdout, /The TSA certificate is trusted\./);
    });

    test("the revoked signer: refused, by OCSP, and by the CRL when OCSP is down", async () => {
      const byOcsp = await sign(pki.revoked);
      assert.notEqual(byOcsp.code, 0);
      assert.match(byOcsp.stderr, /OCSP response indicates the end-entity certificate was revoked/);

      await pki.stopRevocationServices(["ocsp"]);
      try {
        const byCrl = await sign(pki.revoked);
        assert.notEqual(byCrl.code, 0);
        assert.match(byCrl.stderr, /CRL indicates the end-entity certificate was revoked/);
      } finally {
        await pki.startRevocationServices();
      }
    });

    test("with OCSP down signer A still signs, from the CRL; with both down, pyHanko cannot validate the signer", async () => {
      await pki.stopRevocationServices(["ocsp"]);
      try {
        const signed = await sign(pki.signerA);
        assert.equal(signed.code, 0, signed.stderr);
        assert.deepEqual(embedded(signed.out), { ocsps: false, crls: true });
        await pki.stopRevocationServices();
        const failed = await sign(pki.signerA);
        assert.notEqual(failed.code, 0);
        assert.match(failed.stderr, /The signer's certificate could not be validated/);
      } finally {
        await pki.startRevocationServices();
      }
    });
  });

  test("revoke(): a certificate revoked later shows as revoked in OCSP and in a new CRL", async () => {
    const revocation = await pki.revoke("signerB", "superseded");
    assert.equal(revocation.reason, "superseded");
    assert.ok(Math.abs(revocation.time.getTime() - Date.now()) < 5_000);
    assert.deepEqual(pki.revocationOf("signerB"), revocation);
    const ocsp = await ocspCheck(pki.signerB, pki.intermediate, pki.urls.ocsp.intermediate);
    assert.match(ocsp.stdout, /: revoked\n/);
    assert.match(ocsp.stdout, /Reason: superseded/);
    const crl = await verifyWithCrls(await downloadCrls(), pki.signerB);
    assert.match(crl.stdout + crl.stderr, /certificate revoked/);
  });

  test("signer A with an RSA-2048 key (the other CAs and signers stay EC)", async (t) => {
    const started = performance.now();
    const rsa = await startTestPki({ keyTypes: { signerA: "rsa" } });
    t.diagnostic(`startTestPki({ keyTypes: { signerA: "rsa" } }) took ${Math.round(performance.now() - started)} ms`);
    try {
      assert.equal(x509(rsa.signerA).publicKey.asymmetricKeyDetails?.modulusLength, 2048);
      assert.equal(x509(rsa.signerB).publicKey.asymmetricKeyType, "ec");
      const key = await loadLocalKeyFromFiles({ keyPem: readFileSync(rsa.signerA.key), certificatePem: readFileSync(rsa.signerA.cert) });
      try {
        assert.equal(key.algorithm, "RSA-2048");
        await assertSignsFor(key, rsa.signerA);
      } finally {
        await key.close();
      }
      const ocsp = await openssl(["ocsp", "-issuer", rsa.intermediate.cert, "-cert", rsa.signerA.cert, "-url", rsa.urls.ocsp.intermediate, "-CAfile", rsa.root.cert]);
      assert.match(ocsp.stdout, /: good\n/);
      assert.match(ocsp.stderr + ocsp.stdout, /Response verify OK/);
    } finally {
      await rsa.stop();
    }
    assert.throws(() => readFileSync(rsa.signerA.cert), /ENOENT/, "stop() removes the directory");
  });
});
