/**
 * Reads the CMS SignedData of a signature's /Contents with node-forge's ASN.1
 * (it cannot parse EC keys, so certificates are node:crypto's
 * X509Certificate): the one SignerInfo, its attributes, and the certificates
 * the CMS carries.
 */
import { X509Certificate } from "node:crypto";
import forge from "node-forge";
import { OID, toDer, type Asn1 } from "../cms/asn1.js";
import { firstDerElement } from "../cms/der-elements.js";
import { attributes, items, octetBytes, oidOf } from "./asn1-nodes.js";
import { SignatureProblem } from "./signature-problem.js";

const { asn1 } = forge;
const { Class, Type } = asn1;


export interface SignedData {
  certificates: X509Certificate[];
  /** SignerInfo.sid: issuer + serial DERs, or a subject key identifier. */
  sid: { issuer: Buffer; serial: Buffer } | { subjectKeyIdentifier: Buffer };
  digestAlgorithm: string;
  signatureAlgorithm: string;
  signature: Buffer;
  /** DER of the signed attributes re-tagged as SET, the bytes the signature covers (undefined: none). */
  signedAttributesDer: Buffer | undefined;
  signedAttributes: Map<string, Asn1[]>;
  unsignedAttributes: Map<string, Asn1[]>;
  eContentType: string;
  /** The encapsulated content (a timestamp token's TSTInfo), when present. */
  eContent: Buffer | undefined;
}

/** Length of the DER element at the start of /Contents (the rest is zero padding). */
export function cmsLength(contents: Buffer): number {
  if (contents.length < 2 || contents[0] !== 0x30) throw new SignatureProblem("its /Contents does not hold a CMS signature");
  try {
    return firstDerElement(contents, "CMS signature").length;
  } catch {
    throw new SignatureProblem("its /Contents holds a malformed or truncated CMS signature");
  }
}

/** A document timestamp (SubFilter ETSI.RFC3161): its content is the TSTInfo. */
export function isTimestampToken(cms: SignedData): boolean {
  return cms.eContentType === OID.tstInfo;
}

/** Carries an RFC 3161 signature timestamp, or is a timestamp token itself. */
export function isTimestamped(cms: SignedData): boolean {
  return cms.unsignedAttributes.has(OID.signatureTimeStampToken) || isTimestampToken(cms);
}

export function readSignedData(contents: Buffer): SignedData {
  const der = contents.subarray(0, cmsLength(contents));
  let root: Asn1;
  try {
    root = asn1.fromDer(der.toString("binary"), { strict: false, parseAllBytes: true, decodeBitStrings: false } as unknown as boolean);
  } catch (error) {
    throw new SignatureProblem(`its /Contents is not a readable CMS signature (${(error as Error).message})`);
  }
  const [contentType, explicit] = items(root);
  if (oidOf(contentType) !== OID.signedData) throw new SignatureProblem("its /Contents is not a CMS SignedData");
  const signedData = items(items(explicit)[0]);
  let index = 1; // after version
  index++; // digestAlgorithms
  const encap = items(signedData[index++]);
  const eContentType = oidOf(encap[0]);
  let eContent: Buffer | undefined;
  if (encap[1]) {
    const octets = items(encap[1])[0];
    eContent = octets ? octetBytes(octets) : undefined;
  }
  const certificates: X509Certificate[] = [];
  for (; index < signedData.length - 1; index++) {
    const node = signedData[index]!;
    if (node.tagClass === Class.CONTEXT_SPECIFIC && node.type === 0) {
      for (const item of items(node)) {
        if (item.tagClass !== Class.UNIVERSAL || item.type !== Type.SEQUENCE) continue; // other certificate formats
        try {
          certificates.push(new X509Certificate(toDer(item)));
        } catch {
          // an unreadable certificate cannot be the signer's
        }
      }
    }
  }
  const signerInfos = items(signedData[signedData.length - 1]);
  if (signerInfos.length !== 1) throw new SignatureProblem(`its CMS holds ${signerInfos.length} signer infos instead of one`);
  const info = items(signerInfos[0]);
  const sidNode = info[1]!;
  const sid =
    sidNode.tagClass === Class.CONTEXT_SPECIFIC
      ? { subjectKeyIdentifier: Buffer.from(String(sidNode.value ?? ""), "binary") }
      : { issuer: toDer(items(sidNode)[0]!), serial: toDer(items(sidNode)[1]!) };
  const digestAlgorithm = oidOf(items(info[2])[0]);
  let position = 3;
  let signedAttributesDer: Buffer | undefined;
  let signedAttributes = new Map<string, Asn1[]>();
  const maybeSigned = info[position]!;
  if (maybeSigned.tagClass === Class.CONTEXT_SPECIFIC && maybeSigned.type === 0) {
    signedAttributes = attributes(maybeSigned);
    signedAttributesDer = toDer(asn1.create(Class.UNIVERSAL, Type.SET, true, items(maybeSigned)));
    position++;
  }
  const signatureAlgorithm = oidOf(items(info[position++])[0]);
  const signature = octetBytes(info[position++]!);
  const maybeUnsigned = info[position];
  const unsignedAttributes =
    maybeUnsigned && maybeUnsigned.tagClass === Class.CONTEXT_SPECIFIC && maybeUnsigned.type === 1
      ? attributes(maybeUnsigned)
      : new Map<string, Asn1[]>();
  return {
    certificates,
    sid,
    digestAlgorithm,
    signatureAlgorithm,
    signature,
    signedAttributesDer,
    signedAttributes,
    unsignedAttributes,
    eContentType,
    eContent,
  };
}
