/**
 * A self-signed X.509 v3 signing certificate for any key node:crypto holds
 * (RSA or EC). The TBSCertificate is built with forge's ASN.1 and signed with
 * node:crypto, because forge can neither sign with EC keys nor sign fast.
 */
import { createHash, createPublicKey, randomBytes, sign, type KeyObject } from "node:crypto";
import {
  OID,
  algorithmIdentifier,
  booleanValue,
  bitString,
  children,
  explicitTag,
  fromDerExact,
  nullValue,
  objectIdentifier,
  octetString,
  sequence,
  set,
  smallInteger,
  toDer,
  unsignedInteger,
  utf8String,
  x509Time,
  type Asn1,
} from "../cms/asn1.js";
import forge from "node-forge";

export interface SelfSignedCertificateOptions {
  /** The subject's (and issuer's) common name. */
  commonName: string;
  /** Start of validity; default: five minutes ago (tolerates clock skew). */
  notBefore?: Date;
  /** Validity in years from `notBefore`; default 10. */
  validityYears?: number;
}

/**
 * Creates the DER certificate: version 3, random positive 127-bit serial,
 * sha256WithRSAEncryption or ecdsa-with-SHA256, subject = issuer = CN only,
 * extensions basicConstraints CA:FALSE (critical), keyUsage digitalSignature +
 * nonRepudiation (critical), extendedKeyUsage emailProtection + documentSigning
 * (RFC 9336), subjectKeyIdentifier.
 */
export function createSelfSignedCertificate(privateKey: KeyObject, options: SelfSignedCertificateOptions): Buffer {
  const signatureAlgorithm = certificateSignatureAlgorithm(privateKey);
  const spki = fromDerExact(
    createPublicKey(privateKey).export({ type: "spki", format: "der" }),
    "subjectPublicKeyInfo",
  );
  const notBefore = options.notBefore ?? new Date(Date.now() - 5 * 60_000);
  const notAfter = new Date(notBefore.getTime());
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + (options.validityYears ?? 10));

  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, 16 bytes, never a leading zero
  const name = sequence([set([sequence([objectIdentifier(OID.commonName), utf8String(options.commonName)])])]);

  const tbs = sequence([
    explicitTag(0, smallInteger(2)), // v3
    unsignedInteger(serial),
    signatureAlgorithm,
    name,
    sequence([x509Time(notBefore), x509Time(notAfter)]),
    name,
    spki,
    explicitTag(3, sequence(extensions(spki))),
  ]);
  const signature = sign("sha256", toDer(tbs), { key: privateKey, dsaEncoding: "der" });
  return toDer(sequence([tbs, signatureAlgorithm, bitString(signature)]));
}

function certificateSignatureAlgorithm(privateKey: KeyObject): Asn1 {
  switch (privateKey.asymmetricKeyType) {
    case "rsa":
      return algorithmIdentifier(OID.sha256WithRSAEncryption, nullValue());
    case "ec":
      return algorithmIdentifier(OID.ecdsaWithSHA256);
    default:
      throw new Error(`cannot certify a ${privateKey.asymmetricKeyType ?? "symmetric"} key`);
  }
}

function extension(oid: string, critical: boolean, value: Asn1): Asn1 {
  const parts = [objectIdentifier(oid)];
  if (critical) parts.push(booleanValue(true)); // DEFAULT FALSE is omitted in DER
  parts.push(octetString(toDer(value)));
  return sequence(parts);
}

function extensions(spki: Asn1): Asn1[] {
  const [, subjectPublicKey] = children(spki, "subjectPublicKeyInfo");
  // method (1) of RFC 5280 4.2.1.2: SHA-1 of the subjectPublicKey bits
  const keyBits = Buffer.from(subjectPublicKey!.value as string, "binary").subarray(1);
  const keyIdentifier = createHash("sha1").update(keyBits).digest();
  // digitalSignature (bit 0) + nonRepudiation (bit 1): one byte 0b1100_0000, 6 unused bits
  const keyUsage = forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.BITSTRING, false, "\x06\xc0");
  return [
    extension(OID.basicConstraints, true, sequence([])),
    extension(OID.keyUsage, true, keyUsage),
    extension(OID.extKeyUsage, false, sequence([objectIdentifier(OID.emailProtection), objectIdentifier(OID.documentSigning)])),
    extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier)),
  ];
}
