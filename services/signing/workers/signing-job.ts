import { deflateSync } from "node:zlib";
import { PDFName, PDFRawStream } from "pdf-lib";
import { appendCertificatePages } from "../certificate-page/certificate-page.js";
import { describeCertificate } from "../keys/certificate-description.js";
import type { SigningKey } from "../keys/signing-key.js";
import { addDocumentTimestamp, addValidationData, certificateChainOf } from "../ltv/long-term-validation.js";
import type { RevocationSource } from "../ltv/revocation.js";
import { timestampingNotConfigured, type TimestampAuthority } from "../ltv/timestamp-authority.js";
import { addsDocumentTimestamp, embedsValidationData, needsTimestampAuthority } from "../model.js";
import type { SignOrder } from "../request/sign-order.js";
import { PdfOutput } from "../pdf/pdf-output.js";
import { auditTrailJson } from "./audit-trail-json.js";
import { checkSignable, signPdf } from "../pdf/pdf-signer.js";

/**
 * Everything needed to turn one PDF into a signed one: what the order says to
 * write, and the document it applies to. Plain data, so it can cross to a
 * worker thread by structured clone.
 */
export interface SigningJob extends Pick<SignOrder, "signer" | "events" | "certificatePage" | "metadataJson" | "level"> {
  pdf: Uint8Array;
  documentId: string;
  /** Hex SHA-256 of the document as the caller sent it (before any conversion). */
  documentSha256: string;
  signedAt: Date;
}

/** What a worker signs with besides the key. */
export interface SigningServices {
  /** Required for the levels that {@link needsTimestampAuthority}: without one, they are refused (NOT_CONFIGURED) once the document has been checked. */
  timestampAuthority?: Pick<TimestampAuthority, "requestTimestampToken" | "requestTimestampTokenForDigest">;
  revocation: Pick<RevocationSource, "collect">;
}

/** How a job may treat its PDF's memory. */
export interface SigningJobOptions {
  /**
   * The job owns `job.pdf`'s ArrayBuffer (a worker thread owns what its task
   * brought): when that is resizable and `job.pdf` fills it, as the gateway's
   * decoded uploads are, the revisions are appended in it instead of into a
   * copy of the document, and the result is a view of it
   * ({@link PdfOutput.appendingTo}). The bytes of `job.pdf` stay as they are.
   */
  ownsPdf?: boolean;
}

/** Info dictionary key of the caller's metadata. */
export const METADATA_INFO_KEY = "DocServiceMetadata";
/** Signature dictionary key of the signer's audit trail: a JSON stream the signature covers. */
export const AUDIT_TRAIL_KEY = "DocServiceAuditTrail";

/**
 * Signs by incremental update. A document without signatures gets the
 * audit-trail certificate page (unless disabled) and the caller's metadata in
 * its document information; a document signed before gets neither (pages and
 * information changes after a signature are not permitted changes). Every
 * signature carries its signer's audit trail and metadata as a JSON stream in
 * its signature dictionary, covered by that signature.
 */
export async function runSigningJob(job: SigningJob, key: SigningKey, services: SigningServices, options: SigningJobOptions = {}): Promise<Buffer> {
  const output = options.ownsPdf ? PdfOutput.appendingTo(job.pdf) : new PdfOutput(job.pdf);
  const tsa = needsTimestampAuthority(job.level) ? services.timestampAuthority : undefined;
  if (needsTimestampAuthority(job.level) && !tsa) {
    checkSignable(output.bytes);
    throw timestampingNotConfigured(`Level ${job.level}`, "level");
  }
  const tokens: Buffer[] = [];
  const recordingTsa = tsa && {
    requestTimestampToken: async (signature: Buffer) => {
      const token = await tsa.requestTimestampToken(signature);
      tokens.push(token);
      return token;
    },
  };
  await signAndAppendAudit(output, job, key, recordingTsa);
  if (embedsValidationData(job.level)) {
    const data = await services.revocation.collect([[key.certificateDer, ...key.chainDer], ...tokens.map(certificateChainOf)]);
    addValidationData(output, data);
  }
  if (addsDocumentTimestamp(job.level)) await addDocumentTimestamp(output, tsa!);
  return output.bytes;
}

async function signAndAppendAudit(
  output: PdfOutput,
  job: SigningJob,
  key: SigningKey,
  timestampAuthority: Pick<TimestampAuthority, "requestTimestampToken"> | undefined,
): Promise<Buffer> {
  const certificate = describeCertificate(key.certificateDer);
  const certificateFacts = { subject: certificate.subject, sha256Fingerprint: certificate.sha256 };
  const audit = { documentId: job.documentId, documentSha256: job.documentSha256, signer: job.signer, signedAt: job.signedAt, events: job.events };
  const auditTrail = auditTrailJson({ ...audit, certificate: certificateFacts }, job.metadataJson);
  return signPdf(output, key, {
    signerName: job.signer.name,
    contactInfo: job.signer.email,
    reason: "Signed with DocService",
    signingTime: job.signedAt,
    timestampAuthority,
    info: job.metadataJson === undefined ? undefined : { [METADATA_INFO_KEY]: job.metadataJson },
    pages: job.certificatePage
      ? async (document, size) => {
          await appendCertificatePages(document, { ...audit, certificate: certificateFacts }, size);
        }
      : undefined,
    dictionaryEntries: (file, update) => {
      const stream = PDFRawStream.of(file.context.obj({ Type: "EmbeddedFile", Subtype: PDFName.of("application#2Fjson"), Filter: "FlateDecode" }), deflateSync(auditTrail));
      return { [AUDIT_TRAIL_KEY]: update.add(stream) };
    },
  });
}
