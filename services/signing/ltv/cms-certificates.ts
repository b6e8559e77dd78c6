/**
 * The certificates a CMS SignedData carries (RFC 5652 5.1, certificates
 * [0]), as encoded: a signature's or a timestamp token's chain, or a
 * certs-only bundle (what a caIssuers URL may answer, RFC 5280 4.2.2.1).
 * Signers are not looked at (a bundle has none); padding after the
 * ContentInfo, as in a PDF's /Contents, is ignored.
 */
import { OID, fromDerPrefix, oidValue } from "../cms/asn1.js";
import { derChildren } from "../cms/der-elements.js";

/** [0] IMPLICIT CertificateSet, and the certificate choice among CertificateChoices. */
const CERTIFICATES_TAG = 0xa0;
const SEQUENCE_TAG = 0x30;

export function cmsCertificates(der: Buffer): Buffer[] {
  const [contentType, content] = derChildren(der, "ContentInfo");
  if (!contentType || !content || oidValue(fromDerPrefix(contentType, "contentType"), "contentType") !== OID.signedData) {
    throw new Error("not a CMS SignedData");
  }
  const [signedData] = derChildren(content, "ContentInfo content");
  if (!signedData) throw new Error("not a CMS SignedData");
  const certificates = derChildren(signedData, "SignedData").find((field) => field[0] === CERTIFICATES_TAG);
  return certificates ? derChildren(certificates, "certificates").filter((item) => item[0] === SEQUENCE_TAG) : [];
}
