/**
 * Signs a PDF: PAdES baseline B-B (B-T with a signature timestamp from an
 * RFC 3161 TSA), appended as an incremental update ({@link appendSignedRevision}):
 * the bytes received stay as they are, so a document signed before can be
 * signed again and its earlier signatures stay valid. The signature field's
 * widget is invisible; the /ByteRange covers the whole file but /Contents.
 */
import { PDFHexString, PDFName, PDFString, type PDFDocument, type PDFObject } from "pdf-lib";
import { ServiceError } from "../../core/errors.js";
import { buildCmsSignatureForDigest, type CmsSignatureOptions } from "../cms/cms-signature.js";
import type { SigningKey } from "../keys/signing-key.js";
import { signatureTimestampAttribute, type TimestampAuthority } from "../ltv/timestamp-authority.js";
import { readDocumentForm, type DocumentForm } from "./document-form.js";
import type { IncrementalUpdate } from "./incremental-update.js";
import { PdfReadError, type PdfFile } from "./pdf-file.js";
import { PdfOutput } from "./pdf-output.js";
import { openReadablePdf, unreadablePdf } from "./readable-pdf.js";
import { appendSignedRevision } from "./signed-revision.js";

/**
 * Bytes reserved for the DER CMS in /Contents (written as twice as many hex
 * digits) when no larger need is known. Our CMS is certificate + chain +
 * signature + about 400 bytes of attributes: about 1.2 KB for a self-signed
 * RSA-2048 key, 2–3 KB with one CA certificate. 8 KB leaves room for a longer
 * chain; {@link signPdf} grows the default for keys whose certificates need
 * more, and adds {@link TIMESTAMP_TOKEN_RESERVATION_BYTES} when the signature
 * is timestamped.
 */
export const DEFAULT_CONTENTS_RESERVATION_BYTES = 8192;

/**
 * Added to the default reservation for an RFC 3161 signature timestamp token
 * (PAdES B-T), making it 16–20 KB in all: a token is its TSTInfo, the TSA's
 * signature and the TSA's certificate, often with its chain (2–8 KB).
 */
export const TIMESTAMP_TOKEN_RESERVATION_BYTES = 12288;

/** Above the certificates' own size: signature value (≤ 512 B), attributes, issuer names, ASN.1 framing. */
const RESERVATION_MARGIN_BYTES = 4096;

export interface SignPdfOptions {
  /** The signer's name, written to the signature dictionary's /Name. */
  signerName: string;
  reason?: string;
  location?: string;
  contactInfo?: string;
  /**
   * The claimed signing time, written to the signature dictionary's /M (PAdES
   * has no signing-time attribute in the CMS).
   */
  signingTime: Date;
  /**
   * Bytes reserved for the DER CMS in /Contents (default: the larger of
   * {@link DEFAULT_CONTENTS_RESERVATION_BYTES} and the key's certificates plus
   * 4 KB, plus {@link TIMESTAMP_TOKEN_RESERVATION_BYTES} with
   * `timestampAuthority`). A CMS that does not fit is an error naming both sizes.
   */
  contentsReservationBytes?: number;
  /**
   * When given, the signature is timestamped (PAdES B-T): the TSA's token over
   * the signature value is embedded as the id-aa-signatureTimeStampToken
   * unsigned attribute. If the TSA fails, signPdf fails with its
   * {@link ServiceError} UNAVAILABLE; it never signs without the timestamp.
   */
  timestampAuthority?: Pick<TimestampAuthority, "requestTimestampToken">;
  /** Name of the signature field (default "Signature1", or the next free "SignatureN"). */
  fieldName?: string;
  /** Pages to append, drawn into `document` at `size` (only when the PDF carries no signature yet). */
  pages?: (document: PDFDocument, size: [number, number]) => Promise<void>;
  /** Document information entries to set (only when the PDF carries no signature yet). */
  info?: Record<string, string>;
  /** Extra entries of the signature dictionary (the audit trail stream). */
  dictionaryEntries?: (file: PdfFile, update: IncrementalUpdate) => Record<string, PDFObject>;
}

/**
 * Returns `pdf` signed with `key` (PAdES B-B, SubFilter ETSI.CAdES.detached).
 *
 * Throws {@link ServiceError} UNPROCESSABLE_DOCUMENT for a PDF that cannot be
 * read, is encrypted, has no pages, or is certified with no changes allowed.
 * Errors of the key (an HSM that is down) and of the timestamp authority are
 * passed on as they are.
 */
export async function signPdf(pdf: Buffer | PdfOutput, key: SigningKey, options: SignPdfOptions): Promise<Buffer> {
  if (!(options.signingTime instanceof Date) || Number.isNaN(options.signingTime.getTime())) {
    throw new TypeError("signPdf: signingTime must be a valid Date");
  }
  const { timestampAuthority } = options;
  const reservation =
    options.contentsReservationBytes ?? defaultReservation(key) + (timestampAuthority ? TIMESTAMP_TOKEN_RESERVATION_BYTES : 0);
  if (!Number.isInteger(reservation) || reservation < 1024) {
    throw new RangeError(`signPdf: contentsReservationBytes must be an integer of at least 1024, got ${reservation}`);
  }
  const output = pdf instanceof PdfOutput ? pdf : new PdfOutput(pdf);
  const file = openSignablePdf(output.bytes);
  const cmsOptions: CmsSignatureOptions = timestampAuthority
    ? { unsignedAttributes: async (signature) => [signatureTimestampAttribute(await timestampAuthority.requestTimestampToken(signature))] }
    : {};
  try {
    await appendSignedRevision(output, file, {
      reservation,
      dictionary: (file, update) => ({ ...signatureDictionary(options), ...options.dictionaryEntries?.(file, update) }),
      contents: (digest) => buildCmsSignatureForDigest(key, digest, cmsOptions),
      pages: options.pages,
      info: options.info,
      fieldName: options.fieldName,
      check: refuseCertified,
    });
  } catch (error) {
    if (!(error instanceof PdfReadError)) throw error;
    throw unreadablePdf(error);
  }
  return output.bytes;
}

function defaultReservation(key: SigningKey): number {
  const certificates = key.chainDer.reduce((total, der) => total + der.length, key.certificateDer.length);
  const needed = Math.ceil((certificates + RESERVATION_MARGIN_BYTES) / 1024) * 1024;
  return Math.max(DEFAULT_CONTENTS_RESERVATION_BYTES, needed);
}

/**
 * Opens `pdf` for signing: readable, not encrypted, at least one page.
 * Throws {@link ServiceError} UNPROCESSABLE_DOCUMENT saying which.
 */
export function openSignablePdf(pdf: Buffer): PdfFile {
  const file = openReadablePdf(pdf, "signing");
  let pages: number;
  try {
    const count = file.resolve(file.resolveDict(file.catalog().get(PDFName.of("Pages")))?.get(PDFName.of("Count")));
    pages = count && "asNumber" in count ? (count as { asNumber(): number }).asNumber() : 0;
  } catch (error) {
    throw unreadablePdf(error);
  }
  if (pages <= 0) throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The PDF has no pages.");
  return file;
}

/**
 * Throws the UNPROCESSABLE_DOCUMENT that {@link signPdf} would for `pdf`
 * (unreadable, encrypted, no pages, certified against any change) without
 * signing it: for a request refused for another reason, so that what is wrong
 * with the document is heard first.
 */
export function checkSignable(pdf: Buffer): void {
  const file = openSignablePdf(pdf);
  try {
    refuseCertified(readDocumentForm(file));
  } catch (error) {
    if (!(error instanceof PdfReadError)) throw error;
    throw unreadablePdf(error);
  }
}

function refuseCertified(form: DocumentForm): void {
  if (form.noChangesAllowed) {
    throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The PDF is certified with no changes allowed; it cannot be signed again.");
  }
}

/** The signature dictionary's own entries; text strings are UTF-16BE hex strings (names outside Latin-1). */
function signatureDictionary(options: SignPdfOptions): Record<string, PDFObject> {
  const entries: Record<string, PDFObject> = {
    Type: PDFName.of("Sig"),
    Filter: PDFName.of("Adobe.PPKLite"),
    SubFilter: PDFName.of("ETSI.CAdES.detached"),
    M: PDFString.fromDate(options.signingTime),
    Name: PDFHexString.fromText(options.signerName),
  };
  if (options.reason) entries.Reason = PDFHexString.fromText(options.reason);
  if (options.location) entries.Location = PDFHexString.fromText(options.location);
  if (options.contactInfo) entries.ContactInfo = PDFHexString.fromText(options.contactInfo);
  return entries;
}
