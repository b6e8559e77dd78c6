import assert from "node:assert/strict";
import { X509Certificate, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { test } from "node:test";
import { OID } from "../cms/asn1.js";
import { createSelfSignedCertificate } from "../keys/self-signed-certificate.js";
import { SignatureProblem } from "./signature-problem.js";
import { cmsLength, type SignedData } from "./signed-data.js";
import { checkSignature } from "./signed-data-checks.js";

test("the CMS in /Contents ends where its DER length says, the zero padding after it left out", () => {
  const short = Buffer.from([0x30, 0x03, 0x02, 0x01, 0x05]);
  assert.equal(cmsLength(Buffer.concat([short, Buffer.alloc(100)])), 5);
  const long = Buffer.concat([Buffer.from([0x30, 0x82, 0x01, 0x00]), Buffer.alloc(256, 1)]);
  assert.equal(cmsLength(Buffer.concat([long, Buffer.alloc(10)])), 260);
});

test("a /Contents that is not a DER SEQUENCE, says more than it holds, or has an unusable length is a signature problem", () => {
  for (const bytes of [[0x04, 0x01, 0x00], [0x30], [0x30, 0x05, 0x01], [0x30, 0x82, 0x01], [0x30, 0x80, 0x00, 0x00], [0x30, 0x85, 1, 1, 1, 1, 1]]) {
    assert.throws(() => cmsLength(Buffer.from(bytes)), SignatureProblem, JSON.stringify(bytes));
  }
});

function signedWith(privateKey: KeyObject, hash: string, signatureAlgorithm: string, digestAlgorithm: string): { cms: SignedData; certificate: X509Certificate } {
  const certificate = new X509Certificate(createSelfSignedCertificate(privateKey, { commonName: "Algorithm test" }));
  const signedAttributesDer = Buffer.from("signed attributes");
  const signature = sign(hash, signedAttributesDer, { key: privateKey, dsaEncoding: "der" });
  const cms = { signatureAlgorithm, digestAlgorithm, signature, signedAttributesDer } as SignedData;
  return { cms, certificate };
}

test("the hash a signature algorithm names is the one checked, whatever the digestAlgorithm says", () => {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const named = signedWith(privateKey, "sha384", OID.sha384WithRSAEncryption, OID.sha256);
  assert.doesNotThrow(() => checkSignature(named.cms, named.certificate));
  // rsaEncryption names no hash: the digestAlgorithm's is used
  const unnamed = signedWith(privateKey, "sha512", OID.rsaEncryption, OID.sha512);
  assert.doesNotThrow(() => checkSignature(unnamed.cms, unnamed.certificate));
  const mismatched = signedWith(privateKey, "sha256", OID.sha384WithRSAEncryption, OID.sha256);
  assert.throws(() => checkSignature(mismatched.cms, mismatched.certificate), /does not match/);
});

test("an RSA signature algorithm with an EC signer's certificate is refused, not checked as ECDSA", () => {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { cms, certificate } = signedWith(privateKey, "sha256", OID.sha256WithRSAEncryption, OID.sha256);
  assert.throws(() => checkSignature(cms, certificate), /does not fit the signer's ec key/);
  cms.signatureAlgorithm = OID.ecdsaWithSHA256;
  assert.doesNotThrow(() => checkSignature(cms, certificate));
});
