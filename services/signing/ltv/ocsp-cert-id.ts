/**
 * OCSP CertID (RFC 6960 4.1.1): the hash of the issuer's Name as encoded in
 * its certificate, the hash of the issuer's key (the subjectPublicKey BIT
 * STRING's bytes, without its unused-bits count), and the serial number.
 * Also the request we send for one certificate.
 */
import { createHash } from "node:crypto";
import forge from "node-forge";
import { HASH_NAMES, OID, algorithmIdentifier, children, nullValue, octetString, oidValue, primitiveBytes, sequence, toDer, type Asn1 } from "../cms/asn1.js";
import type { Certificate } from "./certificate.js";

const { Class, Type } = forge.asn1;

export interface CertId {
  hashAlgorithm: string;
  issuerNameHash: Buffer;
  issuerKeyHash: Buffer;
  /** The INTEGER's contents octets as encoded. */
  serialNumber: Buffer;
}

/** The CertID hashes a response is matched with: SHA-1, which RFC 6960 requires, and SHA-256. */
const MATCHED_HASHES = new Set<string>([OID.sha1, OID.sha256]);

export function readCertId(node: Asn1 | undefined): CertId {
  const [algorithm, nameHash, keyHash, serialNumber] = children(node, "CertID");
  return {
    hashAlgorithm: oidValue(children(algorithm, "CertID hashAlgorithm")[0], "CertID hashAlgorithm"),
    issuerNameHash: primitiveBytes(nameHash, "issuerNameHash"),
    issuerKeyHash: primitiveBytes(keyHash, "issuerKeyHash"),
    serialNumber: primitiveBytes(serialNumber, "CertID serialNumber"),
  };
}

/** Whether `id` is about `certificate` issued by `issuer`. */
export function identifies(id: CertId, certificate: Certificate, issuer: Certificate): boolean {
  return MATCHED_HASHES.has(id.hashAlgorithm) && id.serialNumber.equals(certificate.serialNumber) && namesIssuer(id, issuer);
}

/** Whether `ca`'s Name and key are those `id` names as the issuer. */
export function namesIssuer(id: CertId, ca: Certificate): boolean {
  const hash = HASH_NAMES[id.hashAlgorithm];
  if (hash === undefined) return false;
  const hashes = issuerHashes(ca, hash);
  return hashes.name.equals(id.issuerNameHash) && hashes.key.equals(id.issuerKeyHash);
}

function issuerHashes(issuer: Certificate, hash: string): { name: Buffer; key: Buffer } {
  return { name: createHash(hash).update(issuer.subject.der).digest(), key: createHash(hash).update(issuer.subjectPublicKey).digest() };
}

/**
 * DER OCSPRequest for `certificate`: one Request, a SHA-1 CertID (what RFC
 * 5019 responders expect), unsigned, no nonce: the same question is the same
 * request, so its answer can be cached, and pre-produced responses serve it.
 */
export function ocspRequest(certificate: Certificate, issuer: Certificate): Buffer {
  const hashes = issuerHashes(issuer, "sha1");
  const certId = sequence([
    algorithmIdentifier(OID.sha1, nullValue()),
    octetString(hashes.name),
    octetString(hashes.key),
    forge.asn1.create(Class.UNIVERSAL, Type.INTEGER, false, certificate.serialNumber.toString("binary")),
  ]);
  // OCSPRequest { TBSRequest { requestList SEQUENCE OF Request { reqCert } } }
  return toDer(sequence([sequence([sequence([sequence([certId])])])]));
}
