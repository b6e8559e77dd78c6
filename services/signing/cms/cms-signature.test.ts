import assert from "node:assert/strict";
import { X509Certificate, createHash, verify } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { after, before, describe, test } from "node:test";
import forge from "node-forge";
import { OID, compareDer, type Asn1 } from "./asn1.js";
import { buildCmsSignature } from "./cms-signature.js";
import { LOCAL_CERTIFICATE_FILE, LOCAL_KEY_FILE, loadLocalKeyFromFiles, loadOrCreateLocalKey } from "../keys/local-key.js";
import { TEST_PKI, createTestPki, openssl, runOpenssl } from "../../../test/support/openssl.js";
import type { SigningKey } from "../keys/signing-key.js";

const { asn1 } = forge;
const root = mkdtempSync(join(tmpdir(), "docservice-cms-"));
after(() => rmSync(root, { recursive: true, force: true }));

const CONTENT = Buffer.from("%PDF-1.7\n… everything the /ByteRange covers, concatenated …\n%%EOF\n");

interface Signer {
  name: string;
  key: SigningKey;
  directory: string;
  /** Trust anchor for `openssl cms -verify -CAfile`, relative to `directory`. */
  caFile: string;
}

const signers: Signer[] = [];

before(async () => {
  for (const algorithm of ["RSA-2048", "ECDSA-P256"] as const) {
    const directory = join(root, algorithm);
    const key = await loadOrCreateLocalKey(directory, { algorithm });
    signers.push({ name: `self-signed ${algorithm}`, key, directory, caFile: LOCAL_CERTIFICATE_FILE });
  }
  // a signer certificate issued by a CA: the chain goes into the CMS, openssl trusts only the root
  const directory = join(root, "issued-ec");
  mkdirSync(directory);
  createTestPki(directory, "ec");
  const read = (name: string) => readFileSync(join(directory, name));
  const key = await loadLocalKeyFromFiles({
    keyPem: read(TEST_PKI.signerKey),
    certificatePem: read(TEST_PKI.signerCertificate),
    chainPem: read(TEST_PKI.rootCertificate),
  });
  signers.push({ name: "CA-issued ECDSA-P256 with chain", key, directory, caFile: TEST_PKI.rootCertificate });
});

/** `openssl cms -verify` of a detached DER signature over `content`. */
function opensslVerify(signer: Signer, signature: Buffer, content: Buffer) {
  writeFileSync(join(signer.directory, "sig.der"), signature);
  writeFileSync(join(signer.directory, "data.bin"), content);
  return runOpenssl(
    [
      "cms", "-verify", "-binary", "-inform", "DER", "-in", "sig.der", "-content", "data.bin",
      "-CAfile", signer.caFile, "-purpose", "any", "-out", "/dev/null",
    ],
    signer.directory,
  );
}

describe("buildCmsSignature", () => {
  test("openssl cms -verify accepts the signature, and rejects it once one content byte changes", async () => {
    for (const signer of signers) {
      const signature = await buildCmsSignature(signer.key, CONTENT);
      const good = opensslVerify(signer, signature, CONTENT);
      assert.equal(good.status, 0, `${signer.name}: ${good.stderr}`);
      assert.match(good.stderr, /Verification successful/);

      const tampered = Buffer.from(CONTENT);
      tampered[10]! ^= 0x01;
      const bad = opensslVerify(signer, signature, tampered);
      assert.notEqual(bad.status, 0, `${signer.name}: a changed byte must fail`);
      assert.match(bad.stderr, /digest failure|Verification failure/);
    }
  });

  test("openssl shows contentType, messageDigest and signingCertificateV2, and no signingTime", async () => {
    for (const signer of signers) {
      writeFileSync(join(signer.directory, "sig.der"), await buildCmsSignature(signer.key, CONTENT));
      const printed = openssl(["cms", "-cmsout", "-print", "-inform", "DER", "-in", "sig.der"], signer.directory);
      const signedAttributes = printed.slice(printed.indexOf("signedAttrs:"), printed.indexOf("signatureAlgorithm:"));
      assert.match(signedAttributes, /object: contentType \(1\.2\.840\.113549\.1\.9\.3\)/);
      assert.match(signedAttributes, /object: messageDigest \(1\.2\.840\.113549\.1\.9\.4\)/);
      assert.match(signedAttributes, /object: id-smime-aa-signingCertificateV2 \(1\.2\.840\.113549\.1\.9\.16\.2\.47\)/);
      assert.equal((signedAttributes.match(/object: /g) ?? []).length, 3, signedAttributes);
      assert.doesNotMatch(printed, /signingTime|1\.2\.840\.113549\.1\.9\.5\b/);
      assert.match(printed, /eContent: <ABSENT>/);
      assert.match(printed, /unsignedAttrs:\s+<ABSENT>/);
    }
  });

  test("the structure is PAdES B-B: digest, certificate reference, algorithms, detached content", async () => {
    for (const signer of signers) {
      const { key } = signer;
      const cms = parseCms(await buildCmsSignature(key, CONTENT));
      assert.equal(cms.contentType, OID.signedData);
      assert.equal(cms.version, 1);
      assert.deepEqual(cms.digestAlgorithms, [OID.sha256]);
      assert.equal(cms.encapContentType, OID.data);
      assert.equal(cms.hasEContent, false);
      assert.deepEqual(
        [...cms.certificates].sort(compareDer),
        [key.certificateDer, ...key.chainDer].sort(compareDer),
      );
      assert.equal(cms.signerInfos.length, 1);

      const info = cms.signerInfos[0]!;
      assert.equal(info.version, 1);
      assert.equal(info.digestAlgorithm, OID.sha256);
      const certificate = new X509Certificate(key.certificateDer);
      assert.equal(info.sidSerialHex, certificate.serialNumber.toUpperCase().replace(/^0+/, ""));
      assert.deepEqual(info.sidIssuerDer, issuerDerOf(key.certificateDer));
      const expectedAlgorithm = key.algorithm === "ECDSA-P256" ? OID.ecdsaWithSHA256 : OID.sha256WithRSAEncryption;
      assert.equal(info.signatureAlgorithm, expectedAlgorithm);

      // signed attributes: exactly these three, in DER SET OF order
      assert.deepEqual(
        [...info.signedAttributes.keys()].sort(),
        [OID.contentType, OID.messageDigest, OID.signingCertificateV2].sort(),
      );
      const encodings = info.signedAttributeDers;
      assert.deepEqual([...encodings].sort(compareDer), encodings, "signedAttrs are in DER order");
      assert.equal(oidOf(info.signedAttributes.get(OID.contentType)!), OID.data);
      assert.deepEqual(bytesOf(info.signedAttributes.get(OID.messageDigest)!), sha256(CONTENT));

      // SigningCertificateV2 { certs { ESSCertIDv2 { certHash, issuerSerial } } }, no hashAlgorithm (sha256 default)
      const [certs, ...policies] = items(info.signedAttributes.get(OID.signingCertificateV2)!);
      assert.equal(policies.length, 0);
      const essCertIds = items(certs!);
      assert.equal(essCertIds.length, 1);
      const essCertId = items(essCertIds[0]!);
      assert.equal(essCertId.length, 2, "ESSCertIDv2 = certHash + issuerSerial (hashAlgorithm omitted)");
      assert.equal(essCertId[0]!.type, asn1.Type.OCTETSTRING);
      assert.deepEqual(bytesOf(essCertId[0]!), sha256(key.certificateDer));
      const [generalNames, serial] = items(essCertId[1]!);
      const [directoryName] = items(generalNames!);
      assert.equal(directoryName!.tagClass, asn1.Class.CONTEXT_SPECIFIC);
      assert.equal(directoryName!.type, 4, "GeneralName directoryName is [4]");
      assert.deepEqual(derOf(items(directoryName!)[0]!), issuerDerOf(key.certificateDer));
      assert.equal(bytesOf(serial!).toString("hex").toUpperCase().replace(/^0+/, ""), info.sidSerialHex);

      // the signature covers the signed attributes encoded as a SET (0x31), verified without openssl too
      assert.equal(info.signedAttributesAsSet[0], 0x31);
      const publicKey = certificate.publicKey;
      assert.ok(verify("sha256", info.signedAttributesAsSet, { key: publicKey, dsaEncoding: "der" }, info.signature));
    }
  });

  test("the encoding is canonical DER: openssl re-encodes it to the same bytes", async () => {
    for (const signer of signers) {
      const signature = await buildCmsSignature(signer.key, CONTENT);
      writeFileSync(join(signer.directory, "sig.der"), signature);
      openssl(["cms", "-cmsout", "-inform", "DER", "-in", "sig.der", "-outform", "DER", "-out", "re.der"], signer.directory);
      assert.deepEqual(readFileSync(join(signer.directory, "re.der")), signature);
    }
  });

  test("each content gets its own messageDigest; concurrent builds do not mix", async () => {
    const [signer] = signers;
    const contents = Array.from({ length: 20 }, (_, i) => Buffer.from(`document ${i}`));
    const signatures = await Promise.all(contents.map((content) => buildCmsSignature(signer!.key, content)));
    signatures.forEach((signature, i) => {
      const digest = parseCms(signature).signerInfos[0]!.signedAttributes.get(OID.messageDigest)!;
      assert.deepEqual(bytesOf(digest), sha256(contents[i]!));
    });
    const good = opensslVerify(signer!, signatures[7]!, contents[7]!);
    assert.equal(good.status, 0, good.stderr);
  });

  test("the unsigned-attributes hook gets the signature value and its attributes land in unsignedAttrs", async () => {
    const signer = signers[1]!;
    let seen: Buffer | undefined;
    const privateOid = "1.3.6.1.4.1.99999.1";
    const signature = await buildCmsSignature(signer.key, CONTENT, {
      unsignedAttributes: (signatureValue) => {
        seen = signatureValue;
        const attribute = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(privateOid).getBytes()),
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, [
            asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, "stamp"),
          ]),
        ]);
        return [Buffer.from(asn1.toDer(attribute).getBytes(), "binary")];
      },
    });
    const info = parseCms(signature).signerInfos[0]!;
    assert.deepEqual(seen, info.signature);
    assert.deepEqual([...info.unsignedAttributes.keys()], [privateOid]);
    const result = opensslVerify(signer, signature, CONTENT);
    assert.equal(result.status, 0, result.stderr);
  });

  test("performance: 500 CMS builds with an RSA-2048 local key, against node-forge's RSA in the same run", async () => {
    const signer = signers.find((candidate) => candidate.key.algorithm === "RSA-2048")!;
    const { key } = signer;
    const count = 500;
    const content = Buffer.alloc(64 * 1024, 7);
    for (let i = 0; i < 20; i++) await buildCmsSignature(key, content); // warm-up

    // the anchor: what a signer built on node-forge (P12Signer) pays for each signature, pure-JS RSA-2048 over SHA-256
    const forgeKey = forge.pki.privateKeyFromPem(readFileSync(join(signer.directory, LOCAL_KEY_FILE), "utf8")) as forge.pki.rsa.PrivateKey;
    const forgeCount = 10;
    let started = performance.now();
    for (let i = 0; i < forgeCount; i++) forgeKey.sign(forge.md.sha256.create().update(content.toString("binary")));
    const forgePerSecond = forgeCount / ((performance.now() - started) / 1000);

    started = performance.now();
    for (let i = 0; i < count; i++) await key.sign(content);
    const rawPerSecond = count / ((performance.now() - started) / 1000);

    started = performance.now();
    for (let i = 0; i < count; i++) await buildCmsSignature(key, content);
    const sequentialPerSecond = count / ((performance.now() - started) / 1000);

    started = performance.now();
    const batch = 8;
    for (let i = 0; i < count; i += batch) {
      await Promise.all(Array.from({ length: batch }, () => buildCmsSignature(key, content)));
    }
    const concurrentPerSecond = count / ((performance.now() - started) / 1000);

    console.log(
      `RSA-2048 over 64 KiB: node-forge ${forgePerSecond.toFixed(0)}/s; key.sign ${rawPerSecond.toFixed(0)}/s; ` +
        `CMS build ${sequentialPerSecond.toFixed(0)}/s sequential, ${concurrentPerSecond.toFixed(0)}/s with ${batch} in flight`,
    );
    // both sides measured now, so a busy machine slows them alike: ten times forge's pure-JS RSA,
    // and the CMS assembly a small part of the signature's cost
    assert.ok(sequentialPerSecond > 10 * forgePerSecond, `CMS builds: ${sequentialPerSecond.toFixed(0)}/s against node-forge's ${forgePerSecond.toFixed(0)}/s`);
    assert.ok(sequentialPerSecond > rawPerSecond * 0.3, "the CMS assembly must not dominate the RSA signature");
  });
});

// --- a small CMS reader for the assertions (forge ASN.1) -------------------

interface ParsedSignerInfo {
  version: number;
  sidIssuerDer: Buffer;
  sidSerialHex: string;
  digestAlgorithm: string;
  /** attribute OID → its single value */
  signedAttributes: Map<string, Asn1>;
  signedAttributeDers: Buffer[];
  signedAttributesAsSet: Buffer;
  signatureAlgorithm: string;
  signature: Buffer;
  unsignedAttributes: Map<string, Asn1>;
}

function parseCms(der: Buffer) {
  const contentInfo = asn1.fromDer(der.toString("binary"), true);
  const [contentType, wrapped] = items(contentInfo);
  const [version, digestAlgorithms, encapContentInfo, ...rest] = items(items(wrapped!)[0]!);
  const certificatesNode = rest.find((node) => node.tagClass === asn1.Class.CONTEXT_SPECIFIC && node.type === 0);
  const signerInfos = rest[rest.length - 1]!;
  return {
    contentType: oidNode(contentType!),
    version: integerOf(version!),
    digestAlgorithms: items(digestAlgorithms!).map((algorithm) => oidNode(items(algorithm)[0]!)),
    encapContentType: oidNode(items(encapContentInfo!)[0]!),
    hasEContent: items(encapContentInfo!).length > 1,
    certificates: certificatesNode ? items(certificatesNode).map(derOf) : [],
    signerInfos: items(signerInfos).map(parseSignerInfo),
  };
}

function parseSignerInfo(node: Asn1): ParsedSignerInfo {
  const [version, sid, digestAlgorithm, signedAttrs, signatureAlgorithm, signature, unsignedAttrs] = items(node);
  const [issuer, serial] = items(sid!);
  const signedItems = items(signedAttrs!);
  const asSet = derOf(signedAttrs!);
  asSet[0] = 0x31; // [0] IMPLICIT → SET OF, as signed
  return {
    version: integerOf(version!),
    sidIssuerDer: derOf(issuer!),
    sidSerialHex: bytesOf(serial!).toString("hex").toUpperCase().replace(/^0+/, ""),
    digestAlgorithm: oidNode(items(digestAlgorithm!)[0]!),
    signedAttributes: attributeMap(signedItems),
    signedAttributeDers: signedItems.map(derOf),
    signedAttributesAsSet: asSet,
    signatureAlgorithm: oidNode(items(signatureAlgorithm!)[0]!),
    signature: bytesOf(signature!),
    unsignedAttributes: unsignedAttrs ? attributeMap(items(unsignedAttrs)) : new Map(),
  };
}

function attributeMap(attributes: Asn1[]): Map<string, Asn1> {
  return new Map(
    attributes.map((attribute) => {
      const [type, values] = items(attribute);
      const valueList = items(values!);
      assert.equal(valueList.length, 1, "one value per attribute");
      return [oidNode(type!), valueList[0]!];
    }),
  );
}

function items(node: Asn1): Asn1[] {
  assert.ok(Array.isArray(node.value), "constructed ASN.1 value expected");
  return node.value;
}
function bytesOf(node: Asn1): Buffer {
  return Buffer.from(node.value as string, "binary");
}
function oidNode(node: Asn1): string {
  assert.equal(node.type, asn1.Type.OID);
  return asn1.derToOid(node.value as string);
}
const oidOf = oidNode;
function integerOf(node: Asn1): number {
  return asn1.derToInteger(node.value as string);
}
function derOf(node: Asn1): Buffer {
  return Buffer.from(asn1.toDer(node).getBytes(), "binary");
}
function sha256(data: Buffer): Buffer {
  return createHash("sha256").update(data).digest();
}
/** The certificate's issuer Name, DER, read by walking TBSCertificate. */
function issuerDerOf(certificateDer: Buffer): Buffer {
  const tbs = items(items(asn1.fromDer(certificateDer.toString("binary"), true))[0]!);
  const offset = tbs[0]!.tagClass === asn1.Class.CONTEXT_SPECIFIC ? 1 : 0;
  return derOf(tbs[offset + 2]!);
}
