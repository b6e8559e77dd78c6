/**
 * Small helpers over node-forge's ASN.1 module, shared by the CMS builder and
 * the self-signed certificate builder. forge works on "binary strings"; these
 * helpers take and return Buffers at the edges.
 */
import forge from "node-forge";

export type Asn1 = forge.asn1.Asn1;

const { asn1 } = forge;
const { Class, Type } = asn1;

/** Object identifiers used by the signing code. */
export const OID = {
  // PKCS#7 / CMS content types
  data: "1.2.840.113549.1.7.1",
  signedData: "1.2.840.113549.1.7.2",
  // PKCS#9 / S/MIME attributes
  contentType: "1.2.840.113549.1.9.3",
  messageDigest: "1.2.840.113549.1.9.4",
  signingTime: "1.2.840.113549.1.9.5",
  signingCertificateV2: "1.2.840.113549.1.9.16.2.47",
  emailAddress: "1.2.840.113549.1.9.1",
  // RFC 3161 timestamps: the token's content type, and the unsigned attribute of a B-T signature
  tstInfo: "1.2.840.113549.1.9.16.1.4",
  signatureTimeStampToken: "1.2.840.113549.1.9.16.2.14",
  // algorithms
  sha1: "1.3.14.3.2.26",
  sha256: "2.16.840.1.101.3.4.2.1",
  sha384: "2.16.840.1.101.3.4.2.2",
  sha512: "2.16.840.1.101.3.4.2.3",
  rsaEncryption: "1.2.840.113549.1.1.1",
  rsassaPss: "1.2.840.113549.1.1.10",
  sha1WithRSAEncryption: "1.2.840.113549.1.1.5",
  sha256WithRSAEncryption: "1.2.840.113549.1.1.11",
  sha384WithRSAEncryption: "1.2.840.113549.1.1.12",
  sha512WithRSAEncryption: "1.2.840.113549.1.1.13",
  ecPublicKey: "1.2.840.10045.2.1",
  ecdsaWithSHA1: "1.2.840.10045.4.1",
  ecdsaWithSHA256: "1.2.840.10045.4.3.2",
  ecdsaWithSHA384: "1.2.840.10045.4.3.3",
  ecdsaWithSHA512: "1.2.840.10045.4.3.4",
  // names and certificate extensions
  commonName: "2.5.4.3",
  countryName: "2.5.4.6",
  organizationName: "2.5.4.10",
  organizationalUnitName: "2.5.4.11",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  basicConstraints: "2.5.29.19",
  cRLDistributionPoints: "2.5.29.31",
  extKeyUsage: "2.5.29.37",
  authorityInfoAccess: "1.3.6.1.5.5.7.1.1",
  emailProtection: "1.3.6.1.5.5.7.3.4",
  documentSigning: "1.3.6.1.5.5.7.3.36",
  // revocation: AIA access methods, OCSP (RFC 6960), CRL extensions (RFC 5280 5.2, 5.3)
  caIssuers: "1.3.6.1.5.5.7.48.2",
  ocsp: "1.3.6.1.5.5.7.48.1",
  ocspBasic: "1.3.6.1.5.5.7.48.1.1",
  ocspSigning: "1.3.6.1.5.5.7.3.9",
  issuerAltName: "2.5.29.18",
  cRLNumber: "2.5.29.20",
  cRLReason: "2.5.29.21",
  invalidityDate: "2.5.29.24",
  deltaCRLIndicator: "2.5.29.27",
  issuingDistributionPoint: "2.5.29.28",
  certificateIssuer: "2.5.29.29",
  authorityKeyIdentifier: "2.5.29.35",
  freshestCRL: "2.5.29.46",
} as const;

/** node:crypto's names of the hash algorithms, by OID. */
export const HASH_NAMES: Readonly<Record<string, string>> = {
  [OID.sha1]: "sha1",
  [OID.sha256]: "sha256",
  [OID.sha384]: "sha384",
  [OID.sha512]: "sha512",
};

/**
 * The signature algorithms whose hash is implied by the OID (as pkijs accepts them),
 * with node:crypto's hash name and the key type each needs: node:crypto would check an
 * RSA algorithm with an EC key as ECDSA.
 */
export const SIGNATURE_ALGORITHMS: Readonly<Record<string, { hash: string; key: "rsa" | "ec" }>> = {
  [OID.sha1WithRSAEncryption]: { hash: "sha1", key: "rsa" },
  [OID.sha256WithRSAEncryption]: { hash: "sha256", key: "rsa" },
  [OID.sha384WithRSAEncryption]: { hash: "sha384", key: "rsa" },
  [OID.sha512WithRSAEncryption]: { hash: "sha512", key: "rsa" },
  [OID.ecdsaWithSHA1]: { hash: "sha1", key: "ec" },
  [OID.ecdsaWithSHA256]: { hash: "sha256", key: "ec" },
  [OID.ecdsaWithSHA384]: { hash: "sha384", key: "ec" },
  [OID.ecdsaWithSHA512]: { hash: "sha512", key: "ec" },
};

export function sequence(items: Asn1[]): Asn1 {
  return asn1.create(Class.UNIVERSAL, Type.SEQUENCE, true, items);
}

/** A SET whose items are used in the given order (see {@link derSetOf} for DER order). */
export function set(items: Asn1[]): Asn1 {
  return asn1.create(Class.UNIVERSAL, Type.SET, true, items);
}

export function objectIdentifier(oid: string): Asn1 {
  return asn1.create(Class.UNIVERSAL, Type.OID, false, asn1.oidToDer(oid).getBytes());
}

export function octetString(bytes: Buffer): Asn1 {
  return asn1.create(Class.UNIVERSAL, Type.OCTETSTRING, false, bytes.toString("binary"));
}

/** BIT STRING with no unused bits, wrapping whole bytes (signatures, keys). */
export function bitString(bytes: Buffer): Asn1 {
  return asn1.create(Class.UNIVERSAL, Type.BITSTRING, false, "\x00" + bytes.toString("binary"));
}

export function smallInteger(value: number): Asn1 {
  return asn1.create(Class.UNIVERSAL, Type.INTEGER, false, asn1.integerToDer(value).getBytes());
}

/** A non-negative INTEGER from its big-endian magnitude. */
export function unsignedInteger(magnitude: Buffer): Asn1 {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  let bytes = magnitude.subarray(start);
  if (bytes.length === 0) bytes = Buffer.from([0]);
  if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return asn1.create(Class.UNIVERSAL, Type.INTEGER, false, bytes.toString("binary"));
}

export function booleanValue(value: boolean): Asn1 {
  return asn1.create(Class.UNIVERSAL, Type.BOOLEAN, false, value ? "\xff" : "\x00");
}

export function nullValue(): Asn1 {
  return asn1.create(Class.UNIVERSAL, Type.NULL, false, "");
}

export function utf8String(text: string): Asn1 {
  return asn1.create(Class.UNIVERSAL, Type.UTF8, false, forge.util.encodeUtf8(text));
}

/** X.509 Time: UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5). */
export function x509Time(date: Date): Asn1 {
  const whole = new Date(Math.floor(date.getTime() / 1000) * 1000);
  return whole.getUTCFullYear() < 2050
    ? asn1.create(Class.UNIVERSAL, Type.UTCTIME, false, asn1.dateToUtcTime(whole))
    : asn1.create(Class.UNIVERSAL, Type.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(whole));
}

/** `[n] EXPLICIT inner`. */
export function explicitTag(tagNumber: number, inner: Asn1): Asn1 {
  return asn1.create(Class.CONTEXT_SPECIFIC, tagNumber as forge.asn1.Type, true, [inner]);
}

/** `[n] IMPLICIT SET OF / SEQUENCE OF items`: the items under a constructed context tag. */
export function implicitConstructed(tagNumber: number, items: Asn1[]): Asn1 {
  return asn1.create(Class.CONTEXT_SPECIFIC, tagNumber as forge.asn1.Type, true, items);
}

export function algorithmIdentifier(oid: string, parameters?: Asn1): Asn1 {
  return sequence(parameters ? [objectIdentifier(oid), parameters] : [objectIdentifier(oid)]);
}

export function toDer(node: Asn1): Buffer {
  return Buffer.from(asn1.toDer(node).getBytes(), "binary");
}

/**
 * Parses DER into forge nodes and checks that forge encodes them back to the
 * very same bytes, so that embedding the nodes (certificates, names) never
 * alters signed content. Throws for BER or non-canonical input.
 */
export function fromDerExact(der: Buffer, what: string): Asn1 {
  const binary = der.toString("binary");
  const node = parseDer(binary, what, true);
  if (asn1.toDer(node).getBytes() !== binary) {
    throw new Error(`${what} is not canonical DER (it would not survive re-encoding)`);
  }
  return node;
}

/** The child nodes of a constructed node; throws with `what` if it is not one. */
export function children(node: Asn1 | undefined, what: string): Asn1[] {
  if (!node || !Array.isArray(node.value)) throw new Error(`${what}: expected a constructed ASN.1 value`);
  return node.value;
}

/** X.690 11.6 order for the components of a SET OF. */
export function compareDer(a: Buffer, b: Buffer): number {
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** The items in DER SET OF order (sorted by their encodings). */
export function derSortedItems(items: Asn1[]): Asn1[] {
  return items
    .map((item) => ({ item, der: toDer(item) }))
    .sort((x, y) => compareDer(x.der, y.der))
    .map(({ item }) => item);
}

/** A `SET OF` in DER order. */
export function derSetOf(items: Asn1[]): Asn1 {
  return set(derSortedItems(items));
}

/** The parts of an X.509 certificate that CMS refers to. */
export interface CertificateParts {
  /** The whole certificate. */
  certificate: Asn1;
  /** TBSCertificate.issuer (Name). */
  issuer: Asn1;
  /** TBSCertificate.serialNumber (INTEGER). */
  serialNumber: Asn1;
  /** TBSCertificate.subjectPublicKeyInfo. */
  subjectPublicKeyInfo: Asn1;
}

/**
 * Reads issuer, serial and public key info straight from a certificate's
 * ASN.1, which works for any key type (forge's `certificateFromAsn1` only
 * understands RSA keys).
 */
export function readCertificate(der: Buffer): CertificateParts {
  const certificate = fromDerExact(der, "certificate");
  const [tbs] = children(certificate, "Certificate");
  const fields = children(tbs, "TBSCertificate");
  // version is [0] EXPLICIT and optional (absent means v1)
  const first = fields[0];
  const offset = first && first.tagClass === Class.CONTEXT_SPECIFIC && first.type === 0 ? 1 : 0;
  const serialNumber = fields[offset];
  const issuer = fields[offset + 2];
  const subjectPublicKeyInfo = fields[offset + 5];
  if (serialNumber?.type !== Type.INTEGER || serialNumber.tagClass !== Class.UNIVERSAL) {
    throw new Error("certificate: serialNumber is not an INTEGER");
  }
  if (issuer?.type !== Type.SEQUENCE || subjectPublicKeyInfo?.type !== Type.SEQUENCE) {
    throw new Error("certificate: unexpected TBSCertificate layout");
  }
  return { certificate, issuer, serialNumber, subjectPublicKeyInfo };
}

/**
 * Parses the element at the start of `der` as others encoded it (OCSP
 * responses, CRLs, certificates to check): BER length forms are accepted and
 * what follows the element (padding) is ignored, as such input is only read,
 * never embedded in what we sign. Throws with `what` for anything else.
 */
export function fromDerPrefix(der: Buffer, what: string): Asn1 {
  return parseDer(der.toString("binary"), what, false);
}

/** BIT STRINGs are kept as bytes (keys, signatures), not guessed to hold ASN.1. */
function parseDer(binary: string, what: string, parseAllBytes: boolean): Asn1 {
  try {
    return asn1.fromDer(binary, { strict: true, parseAllBytes, decodeBitStrings: false } as unknown as boolean);
  } catch (error) {
    throw new Error(`${what} is not valid DER: ${(error as Error).message}`);
  }
}

/** `[tagNumber]`, explicit or implicit. */
export function isContextTag(node: Asn1 | undefined, tagNumber: number): node is Asn1 {
  return node?.tagClass === Class.CONTEXT_SPECIFIC && node.type === tagNumber;
}

/** The dotted form of an OBJECT IDENTIFIER node. */
export function oidValue(node: Asn1 | undefined, what: string): string {
  if (node?.tagClass !== Class.UNIVERSAL || node.type !== Type.OID || typeof node.value !== "string") {
    throw new Error(`${what}: expected an OBJECT IDENTIFIER`);
  }
  return asn1.derToOid(node.value);
}

/**
 * The contents octets of a primitive node as encoded: an INTEGER's two's
 * complement, an OCTET STRING's bytes. Not a BMPString's: forge has decoded
 * those into UTF-16 code units.
 */
export function primitiveBytes(node: Asn1 | undefined, what: string): Buffer {
  if (!node || typeof node.value !== "string" || node.type === Type.BMPSTRING) throw new Error(`${what}: expected a primitive ASN.1 value`);
  return Buffer.from(node.value, "binary");
}

/** A BIT STRING's bytes without the leading unused-bits count (keys, signatures), from a parse without decodeBitStrings. */
export function bitStringBytes(node: Asn1 | undefined, what: string): Buffer {
  if (node?.tagClass !== Class.UNIVERSAL || node.type !== Type.BITSTRING) throw new Error(`${what}: expected a BIT STRING`);
  return primitiveBytes(node, what).subarray(1);
}

const UTC_TIME = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/;
const GENERALIZED_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d+))?Z$/;

/**
 * A UTCTime or GeneralizedTime in the forms RFC 5280 4.1.2.5 and RFC 6960
 * allow (UTC, with seconds), plus the fraction of an RFC 3161 genTime, cut
 * to milliseconds. forge's own parsers misread offsets and fall back to local
 * time; what cannot be read exactly is refused.
 */
export function timeValue(node: Asn1 | undefined, what: string): Date {
  const text = node?.tagClass === Class.UNIVERSAL && typeof node.value === "string" ? node.value : "";
  const match =
    node?.type === Type.UTCTIME ? UTC_TIME.exec(text) : node?.type === Type.GENERALIZEDTIME ? GENERALIZED_TIME.exec(text) : null;
  if (!match) throw new Error(`${what}: expected a UTCTime or GeneralizedTime in UTC`);
  const [, year = "", month, day, hour, minute, second, fraction = ""] = match;
  // UTCTime: 50 to 99 are 19xx, 00 to 49 20xx (RFC 5280 4.1.2.5.1)
  const fullYear = year.length === 4 ? Number(year) : Number(year) + (Number(year) < 50 ? 2000 : 1900);
  const milliseconds = Number(fraction.padEnd(3, "0").slice(0, 3));
  return new Date(Date.UTC(fullYear, Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), milliseconds));
}
