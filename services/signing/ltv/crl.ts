/**
 * Reads a DER CertificateList (RFC 5280 5.1) about one certificate: it must
 * be the issuer's and signed by it, over tbsCertList as received; the
 * certificate is revoked when an entry holds its serial number (the
 * INTEGERs' contents octets compared as encoded, which DER makes unique).
 */
import forge from "node-forge";
import { OID, children, isContextTag, primitiveBytes, timeValue, type Asn1 } from "../cms/asn1.js";
import { derChildren } from "../cms/der-elements.js";
import { readExtensions, type Certificate } from "./certificate.js";
import { readName, sameName } from "./distinguished-name.js";
import type { RevocationStatus } from "./revocation-status.js";
import { readSignedObject, signatureVerifies } from "./signed-object.js";

const { Class, Type } = forge.asn1;

/** The CRL and CRL entry extensions of RFC 5280 (5.2, 5.3); a critical one outside them makes the CRL unusable. */
const KNOWN_CRL_EXTENSIONS = new Set<string>([
  OID.authorityKeyIdentifier,
  OID.issuerAltName,
  OID.cRLNumber,
  OID.deltaCRLIndicator,
  OID.issuingDistributionPoint,
  OID.freshestCRL,
  OID.authorityInfoAccess,
  OID.cRLReason,
  OID.invalidityDate,
  OID.certificateIssuer,
]);

export function crlStatus(bytes: Buffer, certificate: Certificate, issuer: Certificate): RevocationStatus {
  const signed = readSignedObject(bytes, "CRL");
  const fields = children(signed.fields[0], "TBSCertList");
  const encodings = derChildren(signed.encodings[0]!, "TBSCertList");
  // version is optional (v2 only), then signature, issuer, thisUpdate, nextUpdate?, revokedCertificates?, crlExtensions [0]?
  const first = isUniversal(fields[0], Type.INTEGER) ? 1 : 0;
  const [, , thisUpdate, ...optional] = fields.slice(first);
  const nextUpdate = isUniversal(optional[0], Type.UTCTIME) || isUniversal(optional[0], Type.GENERALIZEDTIME) ? optional.shift() : undefined;
  const revoked = isUniversal(optional[0], Type.SEQUENCE) ? optional.shift() : undefined;
  const extensions = optional.find((field) => isContextTag(field, 0));

  if (!sameName(readName(encodings[first + 1]!), issuer.subject)) throw new Error("the CRL is not the issuer's");
  const unknownCritical = extensions ? readExtensions(children(extensions, "crlExtensions")[0]).some((item) => item.critical && !KNOWN_CRL_EXTENSIONS.has(item.oid)) : false;
  if (unknownCritical || !signatureVerifies(signed, issuer.subjectPublicKeyInfo)) throw new Error("the CRL's signature does not verify against the issuer");
  const entry = (revoked ? children(revoked, "revokedCertificates") : []).find((item) =>
    primitiveBytes(children(item, "revoked certificate")[0], "userCertificate").equals(certificate.serialNumber),
  );
  return {
    source: "CRL",
    revokedAt: entry ? timeValue(children(entry, "revoked certificate")[1], "revocationDate") : undefined,
    thisUpdate: timeValue(thisUpdate, "thisUpdate"),
    nextUpdate: nextUpdate ? timeValue(nextUpdate, "nextUpdate") : undefined,
    responderCertificates: [],
  };
}

function isUniversal(node: Asn1 | undefined, type: number): boolean {
  return node?.tagClass === Class.UNIVERSAL && node.type === type;
}
