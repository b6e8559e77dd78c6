/**
 * The detached CMS signature a PAdES baseline B-B signature puts into the PDF's
 * /Contents (SubFilter ETSI.CAdES.detached): ETSI EN 319 142-1 / EN 319 122-1
 * on top of RFC 5652 SignedData.
 *
 *   ContentInfo { id-signedData, [0] SignedData {
 *     version 1, digestAlgorithms { sha256 }, encapContentInfo { id-data } (no eContent),
 *     certificates [0] { signer, chain... (DER order) },
 *     signerInfos { SignerInfo {
 *       version 1, sid issuerAndSerialNumber, digestAlgorithm sha256,
 *       signedAttrs [0] { contentType id-data, messageDigest, signingCertificateV2 },
 *       signatureAlgorithm, signature, unsignedAttrs [1] (optional) } } } }
 *
 * There is deliberately no signing-time attribute: PAdES puts the claimed
 * signing time in the signature dictionary's /M instead.
 *
 * Built with node-forge's ASN.1; the private-key operation is the
 * {@link SigningKey}'s (node:crypto or PKCS#11), never forge's.
 */
import { createHash } from "node:crypto";
import {
  OID,
  algorithmIdentifier,
  derSortedItems,
  explicitTag,
  fromDerExact,
  implicitConstructed,
  nullValue,
  objectIdentifier,
  octetString,
  readCertificate,
  sequence,
  set,
  smallInteger,
  toDer,
  type Asn1,
} from "./asn1.js";
import type { SigningKey } from "../keys/signing-key.js";

export interface CmsSignatureOptions {
  /**
   * Hook for unsigned attributes (later: the RFC 3161 signature timestamp,
   * id-aa-signatureTimeStampToken, which is computed over the signature value).
   * Gets the signature value and returns DER `Attribute`s
   * (`SEQUENCE { attrType OID, attrValues SET }`); they are written as
   * `unsignedAttrs [1] IMPLICIT SET OF Attribute` in DER order.
   */
  unsignedAttributes?: (signatureValue: Buffer) => Promise<Buffer[]> | Buffer[];
}

/**
 * Returns the DER `ContentInfo` (SignedData) signing `signedBytes`, which are
 * the PDF bytes the /ByteRange covers, concatenated.
 */
export async function buildCmsSignature(
  key: SigningKey,
  signedBytes: Buffer,
  options: CmsSignatureOptions = {},
): Promise<Buffer> {
  return buildCmsSignatureForDigest(key, createHash("sha256").update(signedBytes).digest(), options);
}

/** {@link buildCmsSignature} for content whose SHA-256 the caller has computed (streamed, or in pieces). */
export async function buildCmsSignatureForDigest(key: SigningKey, digest: Buffer, options: CmsSignatureOptions = {}): Promise<Buffer> {
  const signer = signerParts(key);

  // DER SET OF order; the signature covers them encoded as SET (0x31), and the
  // SignerInfo carries the same items under [0] IMPLICIT (0xA0).
  const signedAttributes = derSortedItems([
    attribute(OID.contentType, objectIdentifier(OID.data)),
    attribute(OID.messageDigest, octetString(digest)),
    signer.signingCertificateV2,
  ]);
  const signature = await key.sign(toDer(set(signedAttributes)));

  const signerInfo = [
    smallInteger(1), // version 1: sid is issuerAndSerialNumber
    signer.issuerAndSerialNumber,
    algorithmIdentifier(OID.sha256),
    implicitConstructed(0, signedAttributes),
    signer.signatureAlgorithm,
    octetString(signature),
  ];
  if (options.unsignedAttributes) {
    const unsigned = await options.unsignedAttributes(signature);
    if (unsigned.length > 0) {
      const items = unsigned.map((der, index) => fromDerExact(der, `unsigned attribute ${index}`));
      signerInfo.push(implicitConstructed(1, derSortedItems(items)));
    }
  }

  const signedData = sequence([
    smallInteger(1), // version 1: id-data content, no attribute certificates, v1 SignerInfo
    set([algorithmIdentifier(OID.sha256)]),
    sequence([objectIdentifier(OID.data)]), // detached: no eContent
    implicitConstructed(0, signer.certificates), // CertificateSet, in DER SET OF order
    set([sequence(signerInfo)]),
  ]);
  return toDer(sequence([objectIdentifier(OID.signedData), explicitTag(0, signedData)]));
}

function attribute(type: string, value: Asn1): Asn1 {
  return sequence([objectIdentifier(type), set([value])]);
}

/** Everything in a SignerInfo that depends only on the key, computed once per key. */
interface SignerParts {
  /**
   * Signer certificate and chain in DER SET OF order, so the whole ContentInfo
   * is canonical DER (as OpenSSL writes it); verifiers find the signer's
   * certificate by the sid, not by position.
   */
  certificates: Asn1[];
  issuerAndSerialNumber: Asn1;
  signingCertificateV2: Asn1;
  signatureAlgorithm: Asn1;
}

const signerPartsCache = new WeakMap<SigningKey, { certificateDer: Buffer; chainDer: Buffer[]; parts: SignerParts }>();

function signerParts(key: SigningKey): SignerParts {
  const cached = signerPartsCache.get(key);
  if (cached && cached.certificateDer === key.certificateDer && cached.chainDer === key.chainDer) return cached.parts;

  const signer = readCertificate(key.certificateDer);
  const chain = key.chainDer.map((der, index) => fromDerExact(der, `chain certificate ${index}`));
  // ESSCertIDv2 { certHash, issuerSerial { issuer GeneralNames { [4] directoryName }, serialNumber } }
  // hashAlgorithm is left out: sha256 is its DEFAULT, and DER omits defaults.
  const essCertIdV2 = sequence([
    octetString(createHash("sha256").update(key.certificateDer).digest()),
    sequence([sequence([explicitTag(4, signer.issuer)]), signer.serialNumber]),
  ]);
  const parts: SignerParts = {
    certificates: derSortedItems([signer.certificate, ...chain]),
    issuerAndSerialNumber: sequence([signer.issuer, signer.serialNumber]),
    // SigningCertificateV2 { certs SEQUENCE OF ESSCertIDv2 } (no policies)
    signingCertificateV2: attribute(OID.signingCertificateV2, sequence([sequence([essCertIdV2])])),
    signatureAlgorithm: signatureAlgorithmFor(key.algorithm),
  };
  signerPartsCache.set(key, { certificateDer: key.certificateDer, chainDer: key.chainDer, parts });
  return parts;
}

function signatureAlgorithmFor(algorithm: SigningKey["algorithm"]): Asn1 {
  switch (algorithm) {
    case "RSA-2048":
    case "RSA-3072":
      // RFC 4055: sha256WithRSAEncryption carries NULL parameters
      return algorithmIdentifier(OID.sha256WithRSAEncryption, nullValue());
    case "ECDSA-P256":
      // RFC 5758: ecdsa-with-SHA256 has absent parameters
      return algorithmIdentifier(OID.ecdsaWithSHA256);
    default:
      throw new Error(`unsupported signing key algorithm ${String(algorithm)}`);
  }
}
