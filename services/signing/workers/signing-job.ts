import { PDFDict, PDFHexString, PDFName, type PDFDocument } from "pdf-lib";
import { ServiceError } from "../../core/errors.js";
import { describeCertificate } from "../keys/certificate-description.js";
import { appendCertificatePages } from "../certificate-page/certificate-page.js";
import type { AuditEvent, Signer } from "../model.js";
import { loadSignablePdf, signPdf } from "../pdf/pdf-signer.js";
import type { SigningKey } from "../keys/signing-key.js";
import type { TimestampAuthority } from "../ltv/timestamp-authority.js";

/** Everything needed to turn one PDF into a signed one; plain data, so it can cross to a worker thread. */
export interface SigningJob {
  pdf: Uint8Array;
  documentId: string;
  /** Hex SHA-256 of the document as the caller sent it (before any conversion). */
  documentSha256: string;
  signer: Signer;
  events: AuditEvent[];
  signedAt: Date;
  certificatePage: boolean;
  /** The caller's metadata as JSON, written to the document information dictionary. */
  metadataJson?: string;
}

/** Info dictionary key of the caller's metadata. */
export const METADATA_INFO_KEY = "DocServiceMetadata";

/**
 * Appends the audit-trail certificate page (unless disabled), records the
 * caller's metadata, and signs: one load, one save, then the signature.
 */
export async function runSigningJob(job: SigningJob, key: SigningKey, timestampAuthority?: TimestampAuthority): Promise<Buffer> {
  const document = await loadSignablePdf(job.pdf);
  await extend(document, job, key);
  return signPdf(document, key, {
    signerName: job.signer.name,
    contactInfo: job.signer.email,
    reason: "Signed with DocService",
    signingTime: job.signedAt,
    timestampAuthority,
  });
}

/** Adds the metadata and the certificate page. pdf-lib failing on a malformed PDF is the document's fault: 422. */
async function extend(document: PDFDocument, job: SigningJob, key: SigningKey): Promise<void> {
  try {
    return await addMetadataAndPage(document, job, key);
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceError("UNPROCESSABLE_DOCUMENT", `The PDF cannot be processed: ${(error as Error).message}`, { cause: error });
  }
}

async function addMetadataAndPage(document: PDFDocument, job: SigningJob, key: SigningKey): Promise<void> {
  if (job.metadataJson !== undefined) {
    infoDictionary(document).set(PDFName.of(METADATA_INFO_KEY), PDFHexString.fromText(job.metadataJson));
  }
  if (job.certificatePage) {
    const certificate = describeCertificate(key.certificateDer);
    await appendCertificatePages(document, {
      documentId: job.documentId,
      documentSha256: job.documentSha256,
      signer: job.signer,
      signedAt: job.signedAt,
      certificate: { subject: certificate.subject, sha256Fingerprint: certificate.sha256 },
      events: job.events,
    });
  }
}

/** The trailer's /Info dictionary, created when the PDF has none (pdf-lib keeps its own accessor private). */
function infoDictionary(document: PDFDocument): PDFDict {
  const { context } = document;
  const existing = context.trailerInfo.Info ? context.lookup(context.trailerInfo.Info) : undefined;
  if (existing instanceof PDFDict) return existing;
  const created = context.obj({});
  context.trailerInfo.Info = context.register(created);
  return created;
}
