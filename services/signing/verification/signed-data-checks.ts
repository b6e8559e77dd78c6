/**
 * The checks of a CMS SignedData against what it signs: the signer
 * certificate it names, the messageDigest (and a timestamp token's
 * messageImprint) over the signed bytes, the signature over the signed
 * attributes, and the signingCertificateV2 attribute.
 */
import { X509Certificate, createHash, verify as cryptoVerify } from "node:crypto";
import forge from "node-forge";
import { HASH_NAMES, OID, SIGNATURE_ALGORITHMS, toDer } from "../cms/asn1.js";
import { items, octetBytes, oidOf, tbsFieldsFromSerial } from "./asn1-nodes.js";
import { safe } from "./safe.js";
import { SignatureProblem } from "./signature-problem.js";
import { isTimestampToken, type SignedData } from "./signed-data.js";

const { asn1 } = forge;
const { Type } = asn1;

/** The certificate SignerInfo.sid names; `verified` when finding it meant checking the signature already. */
export function findSignerCertificate(cms: SignedData): { certificate: X509Certificate; verified: boolean } {
  if ("issuer" in cms.sid) {
    const { issuer, serial } = cms.sid;
    for (const certificate of cms.certificates) {
      const parts = safe(() => issuerAndSerial(Buffer.from(certificate.raw)), undefined);
      if (parts && parts.issuer.equals(issuer) && parts.serial.equals(serial)) return { certificate, verified: false };
    }
  } else {
    // subjectKeyIdentifier: the certificate whose key verifies the signature
    for (const certificate of cms.certificates) {
      if (safe(() => (checkSignature(cms, certificate), true), false)) return { certificate, verified: true };
    }
  }
  throw new SignatureProblem("its CMS does not include the signer's certificate");
}

function issuerAndSerial(der: Buffer): { issuer: Buffer; serial: Buffer } {
  const fields = tbsFieldsFromSerial(der);
  return { serial: toDer(fields[0]!), issuer: toDer(fields[2]!) };
}

function hashName(oid: string): string {
  const name = HASH_NAMES[oid];
  if (!name) throw new SignatureProblem(`its digest algorithm ${oid} is not supported`);
  return name;
}

export function checkDigest(cms: SignedData, signedBytes: Buffer): void {
  const hash = hashName(cms.digestAlgorithm);
  if (isTimestampToken(cms) && cms.eContent) {
    // a document timestamp (ETSI.RFC3161): the TSTInfo's messageImprint is the document hash
    const imprint = items(items(asn1.fromDer(cms.eContent.toString("binary")))[2]);
    const imprintHash = hashName(oidOf(items(imprint[0])[0]));
    const hashed = octetBytes(imprint[1]!);
    if (!createHash(imprintHash).update(signedBytes).digest().equals(hashed)) {
      throw new SignatureProblem("it was changed after signing");
    }
  }
  const content = cms.eContent ?? signedBytes;
  if (cms.signedAttributesDer === undefined) return; // the signature itself covers the content
  const digest = cms.signedAttributes.get(OID.messageDigest)?.[0];
  if (!digest) throw new SignatureProblem("its CMS has no messageDigest attribute");
  if (!createHash(hash).update(content).digest().equals(octetBytes(digest))) {
    throw new SignatureProblem("it was changed after signing");
  }
}

export function checkSignature(cms: SignedData, certificate: X509Certificate): void {
  if (cms.signatureAlgorithm === OID.rsassaPss) throw new SignatureProblem("RSASSA-PSS signatures are not supported");
  // a signature algorithm that names its hash (sha256WithRSAEncryption) says which; rsaEncryption and ecPublicKey take the digestAlgorithm's
  const algorithm = SIGNATURE_ALGORITHMS[cms.signatureAlgorithm];
  if (algorithm && certificate.publicKey.asymmetricKeyType !== algorithm.key) {
    throw new SignatureProblem(`its signature algorithm ${cms.signatureAlgorithm} does not fit the signer's ${certificate.publicKey.asymmetricKeyType} key`);
  }
  const hash = algorithm?.hash ?? hashName(cms.digestAlgorithm);
  const data = cms.signedAttributesDer;
  if (data === undefined) throw new SignatureProblem("its CMS has no signed attributes");
  let ok: boolean;
  try {
    ok = cryptoVerify(hash, data, { key: certificate.publicKey, dsaEncoding: "der" }, cms.signature);
  } catch {
    ok = false;
  }
  if (!ok) throw new SignatureProblem("its cryptographic signature does not match the signer's certificate");
}

/** signingCertificateV2 (when present) must name the signer certificate by its hash. */
export function checkSigningCertificateAttribute(cms: SignedData, certificate: X509Certificate): void {
  const value = cms.signedAttributes.get(OID.signingCertificateV2)?.[0];
  if (!value) return;
  const first = items(items(value)[0])[0];
  const fields = items(first);
  let hash = "sha256";
  let index = 0;
  if (fields[0]!.type === Type.SEQUENCE) {
    hash = hashName(oidOf(items(fields[0])[0]));
    index = 1;
  }
  const expected = octetBytes(fields[index]!);
  if (!createHash(hash).update(certificate.raw).digest().equals(expected)) {
    throw new SignatureProblem("its signingCertificateV2 attribute names another certificate");
  }
}
