/**
 * An X.509 certificate as revocation checking reads it: the names that chain
 * it, its serial number and key as an OCSP CertID takes them (the bytes as
 * encoded), its validity, its extensions, and what its issuer signed.
 */
import forge from "node-forge";
import { bitStringBytes, children, isContextTag, oidValue, primitiveBytes, timeValue, type Asn1 } from "../cms/asn1.js";
import { derChildren } from "../cms/der-elements.js";
import { readName, sameName, type Name } from "./distinguished-name.js";
import { readSignedObject, type SignedObject } from "./signed-object.js";

const { Type } = forge.asn1;

export interface Extension {
  oid: string;
  critical: boolean;
  /** The contents of extnValue: the extension's own DER. */
  value: Buffer;
}

export interface Certificate {
  /** The certificate as encoded. */
  der: Buffer;
  signed: SignedObject;
  /** The INTEGER's contents octets as encoded (a leading zero kept), as CRLs and CertIDs hold them. */
  serialNumber: Buffer;
  issuer: Name;
  subject: Name;
  notBefore: Date;
  notAfter: Date;
  /** DER SubjectPublicKeyInfo. */
  subjectPublicKeyInfo: Buffer;
  /** The subjectPublicKey BIT STRING's bytes after its unused-bits count (what OCSP's key hashes cover). */
  subjectPublicKey: Buffer;
  extensions: Extension[];
}

/**
 * `bytes`: a Buffer, or a Uint8Array as structured cloning (worker data)
 * leaves one. Copied, so that the certificate's bytes stay its own whatever
 * becomes of the caller's buffer (a transferred one is emptied).
 */
export function parseCertificate(bytes: Uint8Array): Certificate {
  const signed = readSignedObject(Buffer.from(bytes), "certificate");
  const fields = children(signed.fields[0], "TBSCertificate");
  const encodings = derChildren(signed.encodings[0]!, "TBSCertificate");
  // version is [0] EXPLICIT and absent in v1 certificates
  const first = isContextTag(fields[0], 0) ? 1 : 0;
  const [serialNumber, , , validity, , subjectPublicKeyInfo, ...optional] = fields.slice(first);
  const [, , issuerDer, , subjectDer, subjectPublicKeyInfoDer] = encodings.slice(first);
  if (!issuerDer || !subjectDer || !subjectPublicKeyInfoDer || serialNumber?.type !== Type.INTEGER) {
    throw new Error("certificate: unexpected TBSCertificate layout");
  }
  const [notBefore, notAfter] = children(validity, "Validity");
  const extensions = optional.find((field) => isContextTag(field, 3));
  return {
    der: signed.der,
    signed,
    serialNumber: primitiveBytes(serialNumber, "serialNumber"),
    issuer: readName(issuerDer),
    subject: readName(subjectDer),
    notBefore: timeValue(notBefore, "notBefore"),
    notAfter: timeValue(notAfter, "notAfter"),
    subjectPublicKeyInfo: subjectPublicKeyInfoDer,
    subjectPublicKey: bitStringBytes(children(subjectPublicKeyInfo, "SubjectPublicKeyInfo")[1], "subjectPublicKey"),
    extensions: extensions ? readExtensions(children(extensions, "extensions")[0]) : [],
  };
}

/** Extensions ::= SEQUENCE OF Extension (a certificate's, a CRL's). */
export function readExtensions(node: Asn1 | undefined): Extension[] {
  return children(node, "Extensions").map((extension) => {
    const [oid, ...rest] = children(extension, "Extension");
    const critical = rest.length === 2 && rest[0]!.type === Type.BOOLEAN && rest[0]!.value !== "\x00";
    return { oid: oidValue(oid, "extnID"), critical, value: primitiveBytes(rest.at(-1), "extnValue") };
  });
}

/** The DER value of the first extension `oid`, if present. */
export function extensionValue(certificate: Certificate, oid: string): Buffer | undefined {
  return certificate.extensions.find((extension) => extension.oid === oid)?.value;
}

export function isSelfIssued(certificate: Certificate): boolean {
  return sameName(certificate.subject, certificate.issuer);
}

export function issues(issuer: Certificate, certificate: Certificate): boolean {
  return sameName(issuer.subject, certificate.issuer);
}
