/**
 * Checks one signature dictionary: its /ByteRange, the CMS SignedData in its
 * /Contents (messageDigest, signature over the signed attributes, signer
 * certificate), who signed, and optionally whether the signer chains up to a
 * trusted root. What it cannot establish becomes the report's `problem`.
 */
import { createHash, type X509Certificate } from "node:crypto";
import type { SignatureAssessment } from "../ltv/signature-assessment.js";
import { chainsToRoot } from "../verification/certificate-chain.js";
import { subjectIdentity } from "../verification/certificate-identity.js";
import { SignatureProblem } from "../verification/signature-problem.js";
import { checkDigest, checkSignature, checkSigningCertificateAttribute, findSignerCertificate } from "../verification/signed-data-checks.js";
import { cmsLength, isTimestamped, readSignedData } from "../verification/signed-data.js";
import type { SignatureReport } from "../verification/verification-result.js";
import { byteRangeEnd, type SignatureEntry } from "./signature-dictionaries.js";
import { signedByteRange } from "./signed-byte-range.js";

const EMAIL_LIKE = /^[^\s@]+@[^\s@]+$/;

/** A signature's report before its assessment (level, indication, revocation) is added. */
export type SignatureIntegrity = Omit<SignatureReport, keyof SignatureAssessment>;

export interface CheckedSignature {
  report: SignatureIntegrity;
  /** The CMS in /Contents, when it could be read. */
  contents?: Buffer;
  signerDer?: Buffer;
  /** The covered bytes no longer match the signed digest. */
  hashFailure: boolean;
}

/**
 * `roots` undefined: no trust check. `moreCertificates`: intermediates from
 * elsewhere in the document (its DSS) that the CMS may not carry.
 */
export function checkSignatureEntry(
  pdf: Buffer,
  entry: SignatureEntry,
  roots: X509Certificate[] | undefined,
  moreCertificates: X509Certificate[],
): CheckedSignature {
  const result: SignatureIntegrity = {
    name: entry.name,
    email: "",
    signedAt: entry.signedAt,
    certificateFingerprint: "",
    subFilter: entry.subFilter,
    coversWholeDocument: byteRangeEnd(entry.byteRange) === pdf.length,
    timestamped: false,
    intact: false,
    kind: entry.subFilter === "ETSI.RFC3161" ? "document-timestamp" : "signature",
    revision: 0,
    laterChangesPermitted: true,
  };
  const checked: CheckedSignature = { report: result, hashFailure: false };
  try {
    const { contents, signedBytes } = signedByteRange(pdf, entry);
    const cms = readSignedData(contents);
    checked.contents = contents.subarray(0, cmsLength(contents));
    const signer = findSignerCertificate(cms);
    checked.signerDer = Buffer.from(signer.certificate.raw);
    result.certificateFingerprint = createHash("sha256").update(signer.certificate.raw).digest("hex");
    const identity = subjectIdentity(signer.certificate);
    if (!result.name) result.name = identity.commonName;
    result.email = identity.email || (EMAIL_LIKE.test(entry.contactInfo) ? entry.contactInfo : "");
    result.timestamped = isTimestamped(cms);
    try {
      checkDigest(cms, signedBytes);
    } catch (error) {
      checked.hashFailure = true;
      throw error;
    }
    if (!signer.verified) checkSignature(cms, signer.certificate);
    checkSigningCertificateAttribute(cms, signer.certificate);
    result.intact = true;
    if (roots !== undefined && !chainsToRoot(signer.certificate, [...cms.certificates, ...moreCertificates], roots)) {
      result.problem = "not trusted";
    }
  } catch (error) {
    result.problem =
      error instanceof SignatureProblem ? error.message : `the signature cannot be read (${(error as Error).message})`;
  }
  return checked;
}
