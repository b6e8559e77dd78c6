import assert from "node:assert/strict";
import { X509Certificate, verify } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  DEFAULT_LOCAL_KEY_SUBJECT,
  LOCAL_CERTIFICATE_FILE,
  LOCAL_KEY_FILE,
  loadLocalKeyFromFiles,
  loadOrCreateLocalKey,
} from "./local-key.js";
import { TEST_PKI, createTestPki, openssl, type TestKeyType } from "../../../test/support/openssl.js";
import type { SigningKey } from "./signing-key.js";

const root = mkdtempSync(join(tmpdir(), "docservice-local-key-"));
after(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
function freshDirectory(): string {
  return join(root, `case-${++counter}`);
}

const DATA = Buffer.from("bytes covered by the /ByteRange");

/** True if `signature` verifies over DATA with the public key of `key`'s certificate. */
function verifiesWithCertificate(key: SigningKey, signature: Buffer, data = DATA): boolean {
  const publicKey = new X509Certificate(key.certificateDer).publicKey;
  return verify("sha256", data, { key: publicKey, dsaEncoding: "der" }, signature);
}

describe("loadOrCreateLocalKey", () => {
  test("creates an RSA-2048 key and certificate on first start and loads the same ones later", async () => {
    const directory = freshDirectory();
    const first = await loadOrCreateLocalKey(directory);
    assert.equal(first.algorithm, "RSA-2048");
    assert.deepEqual(first.chainDer, []);
    const keyPem = readFileSync(join(directory, LOCAL_KEY_FILE), "utf8");
    assert.match(keyPem, /^-----BEGIN PRIVATE KEY-----\n/);
    assert.equal(statSync(join(directory, LOCAL_KEY_FILE)).mode & 0o777, 0o600);
    assert.equal(statSync(directory).mode & 0o777, 0o700);

    const second = await loadOrCreateLocalKey(directory);
    assert.deepEqual(second.certificateDer, first.certificateDer);
    assert.equal(readFileSync(join(directory, LOCAL_KEY_FILE), "utf8"), keyPem);
    // PKCS#1 v1.5 is deterministic: the same key gives the same signature
    const signature = await first.sign(DATA);
    assert.deepEqual(await second.sign(DATA), signature);
    assert.ok(verifiesWithCertificate(first, signature));
    assert.equal(verifiesWithCertificate(first, signature, Buffer.from("other bytes")), false);
  });

  test("creates an ECDSA P-256 key whose DER signatures verify against the certificate", async () => {
    const directory = freshDirectory();
    const key = await loadOrCreateLocalKey(directory, { algorithm: "ECDSA-P256" });
    assert.equal(key.algorithm, "ECDSA-P256");
    const certificate = new X509Certificate(key.certificateDer);
    assert.equal(certificate.publicKey.asymmetricKeyType, "ec");
    const signature = await key.sign(DATA);
    assert.equal(signature[0], 0x30, "ECDSA-Sig-Value is a DER SEQUENCE");
    assert.ok(verifiesWithCertificate(key, signature));

    const reloaded = await loadOrCreateLocalKey(directory);
    assert.deepEqual(reloaded.certificateDer, key.certificateDer);
    assert.ok(verifiesWithCertificate(key, await reloaded.sign(DATA)));
  });

  test("the certificate is one openssl reads: subject, validity, key usage, extended key usage", async () => {
    const directory = freshDirectory();
    await loadOrCreateLocalKey(directory, { algorithm: "ECDSA-P256" });
    const text = openssl(["x509", "-in", LOCAL_CERTIFICATE_FILE, "-noout", "-text"], directory);
    assert.match(text, /Version: 3 \(0x2\)/);
    assert.match(text, new RegExp(`Subject: CN ?= ?${escapeRegExp(DEFAULT_LOCAL_KEY_SUBJECT)}`));
    assert.match(text, new RegExp(`Issuer: CN ?= ?${escapeRegExp(DEFAULT_LOCAL_KEY_SUBJECT)}`));
    assert.match(text, /Signature Algorithm: ecdsa-with-SHA256/);
    assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature, Non Repudiation\n/);
    assert.match(text, /X509v3 Basic Constraints: critical\s+CA:FALSE/);
    assert.match(text, /X509v3 Extended Key Usage: \s*E-mail Protection/);
    assert.match(text, /X509v3 Subject Key Identifier/);

    const certificate = new X509Certificate(readFileSync(join(directory, LOCAL_CERTIFICATE_FILE)));
    const years = (Date.parse(certificate.validTo) - Date.parse(certificate.validFrom)) / (365.25 * 86_400_000);
    assert.ok(years > 9.9 && years < 10.1, `valid ${years} years`);
    assert.ok(Date.parse(certificate.validFrom) <= Date.now());
    // the self-signature is valid, and it is acceptable for S/MIME signing
    openssl(["verify", "-purpose", "smimesign", "-CAfile", LOCAL_CERTIFICATE_FILE, LOCAL_CERTIFICATE_FILE], directory);
  });

  test("an RSA certificate is signed with sha256WithRSAEncryption and carries the given subject", async () => {
    const directory = freshDirectory();
    await loadOrCreateLocalKey(directory, { subject: "Acme Corp document signing" });
    const text = openssl(["x509", "-in", LOCAL_CERTIFICATE_FILE, "-noout", "-text"], directory);
    assert.match(text, /Subject: CN ?= ?Acme Corp document signing/);
    assert.match(text, /Public-Key: \(2048 bit\)/);
    assert.match(text, /Signature Algorithm: sha256WithRSAEncryption/);
    openssl(["verify", "-CAfile", LOCAL_CERTIFICATE_FILE, LOCAL_CERTIFICATE_FILE], directory);
  });

  test("refuses to start with an existing key of another algorithm than asked for", async () => {
    const directory = freshDirectory();
    await loadOrCreateLocalKey(directory, { algorithm: "ECDSA-P256" });
    await assert.rejects(loadOrCreateLocalKey(directory, { algorithm: "RSA-2048" }), /holds an ECDSA-P256 key/);
  });

  test("a key without its certificate gets a new certificate for the same key", async () => {
    const directory = freshDirectory();
    const first = await loadOrCreateLocalKey(directory, { algorithm: "ECDSA-P256" });
    unlinkSync(join(directory, LOCAL_CERTIFICATE_FILE));
    const second = await loadOrCreateLocalKey(directory);
    assert.notDeepEqual(second.certificateDer, first.certificateDer);
    assert.ok(verifiesWithCertificate(first, await second.sign(DATA)));
  });

  test("two concurrent first starts end up with one key", async () => {
    const directory = freshDirectory();
    const [a, b] = await Promise.all([
      loadOrCreateLocalKey(directory, { algorithm: "ECDSA-P256" }),
      loadOrCreateLocalKey(directory, { algorithm: "ECDSA-P256" }),
    ]);
    const publicKeyOf = (key: SigningKey) =>
      new X509Certificate(key.certificateDer).publicKey.export({ type: "spki", format: "der" });
    assert.deepEqual(publicKeyOf(a), publicKeyOf(b));
    const reloaded = await loadOrCreateLocalKey(directory);
    assert.ok(verifiesWithCertificate(a, await reloaded.sign(DATA)));
    assert.ok(verifiesWithCertificate(b, await reloaded.sign(DATA)));
  });

  test("a closed key no longer signs", async () => {
    const key = await loadOrCreateLocalKey(freshDirectory(), { algorithm: "ECDSA-P256" });
    await key.close();
    await assert.rejects(key.sign(DATA), /closed/);
  });
});

describe("loadLocalKeyFromFiles", () => {
  const pkis = new Map<TestKeyType, string>();
  function pki(type: TestKeyType): string {
    let directory = pkis.get(type);
    if (!directory) {
      directory = join(root, `pki-${type}`);
      mkdirSync(directory);
      createTestPki(directory, type);
      pkis.set(type, directory);
    }
    return directory;
  }
  const read = (directory: string, name: string) => readFileSync(join(directory, name));
  const derOf = (directory: string, name: string) => Buffer.from(new X509Certificate(read(directory, name)).raw);

  for (const [type, algorithm] of [["rsa", "RSA-2048"], ["ec", "ECDSA-P256"]] as const) {
    test(`PEM key + certificate + chain (${type})`, async () => {
      const directory = pki(type);
      const key = await loadLocalKeyFromFiles({
        keyPem: read(directory, TEST_PKI.signerKey),
        certificatePem: read(directory, TEST_PKI.signerCertificate),
        chainPem: read(directory, TEST_PKI.rootCertificate),
      });
      assert.equal(key.algorithm, algorithm);
      assert.deepEqual(key.certificateDer, derOf(directory, TEST_PKI.signerCertificate));
      assert.deepEqual(key.chainDer, [derOf(directory, TEST_PKI.rootCertificate)]);
      assert.ok(verifiesWithCertificate(key, await key.sign(DATA)));
    });

    test(`PKCS#12 made by openssl pkcs12 -export (${type})`, async () => {
      const directory = pki(type);
      openssl(
        [
          "pkcs12", "-export", "-inkey", TEST_PKI.signerKey, "-in", TEST_PKI.signerCertificate,
          "-certfile", TEST_PKI.rootCertificate, "-passout", "pass:s3cret", "-out", "signer.p12",
        ],
        directory,
      );
      const pkcs12 = read(directory, "signer.p12");
      const key = await loadLocalKeyFromFiles({ pkcs12, passphrase: "s3cret" });
      assert.equal(key.algorithm, algorithm);
      // byte-identical certificates, not forge re-encodings
      assert.deepEqual(key.certificateDer, derOf(directory, TEST_PKI.signerCertificate));
      assert.deepEqual(key.chainDer, [derOf(directory, TEST_PKI.rootCertificate)]);
      assert.ok(verifiesWithCertificate(key, await key.sign(DATA)));

      await assert.rejects(loadLocalKeyFromFiles({ pkcs12, passphrase: "wrong" }), /PKCS#12/);
    });
  }

  test("a full-chain PEM in any order: the certificate matching the key signs, the rest is the chain", async () => {
    const directory = pki("ec");
    const fullChain = Buffer.concat([read(directory, TEST_PKI.rootCertificate), read(directory, TEST_PKI.signerCertificate)]);
    const key = await loadLocalKeyFromFiles({ keyPem: read(directory, TEST_PKI.signerKey), certificatePem: fullChain });
    assert.deepEqual(key.certificateDer, derOf(directory, TEST_PKI.signerCertificate));
    assert.deepEqual(key.chainDer, [derOf(directory, TEST_PKI.rootCertificate)]);
  });

  test("an encrypted PEM key with its passphrase", async () => {
    const directory = pki("rsa");
    openssl(
      ["pkey", "-in", TEST_PKI.signerKey, "-aes-256-cbc", "-passout", "pass:pem-pass", "-out", "signer-encrypted.key"],
      directory,
    );
    const files = {
      keyPem: read(directory, "signer-encrypted.key"),
      certificatePem: read(directory, TEST_PKI.signerCertificate),
    };
    const key = await loadLocalKeyFromFiles({ ...files, passphrase: "pem-pass" });
    assert.ok(verifiesWithCertificate(key, await key.sign(DATA)));
    await assert.rejects(loadLocalKeyFromFiles({ ...files, passphrase: "nope" }), /cannot read the private key/);
  });

  test("refuses a certificate that does not belong to the key", async () => {
    const directory = pki("rsa");
    await assert.rejects(
      loadLocalKeyFromFiles({
        keyPem: read(directory, TEST_PKI.signerKey),
        certificatePem: read(directory, TEST_PKI.rootCertificate),
      }),
      /no certificate in certificatePem matches the private key/,
    );
  });

  test("refuses unsupported keys", async () => {
    const directory = freshDirectory();
    mkdirSync(directory);
    openssl(
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:secp384r1", "-nodes", "-days", "1",
        "-keyout", "p384.key", "-out", "p384.pem", "-subj", "/CN=P-384"],
      directory,
    );
    await assert.rejects(
      loadLocalKeyFromFiles({ keyPem: read(directory, "p384.key"), certificatePem: read(directory, "p384.pem") }),
      /EC curve secp384r1 is not supported/,
    );
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
