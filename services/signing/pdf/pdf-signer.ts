/**
 * Signs a PDF: PAdES baseline B-B (B-T with a signature timestamp from an
 * RFC 3161 TSA), one invisible signature field on the first
 * page, the whole file covered by the /ByteRange except the /Contents hole.
 *
 *   pdf-lib loads and re-saves the document (no incremental update: pdf-lib
 *   cannot write one, so PDFs that are already signed are refused);
 *   @signpdf/placeholder-pdf-lib adds the signature field, widget and AcroForm
 *   entries; the signature dictionary itself is ours (see
 *   {@link signatureDictionary}); @signpdf/signpdf computes the /ByteRange,
 *   hands the covered bytes to our {@link Signer}, and writes its DER CMS
 *   ({@link buildCmsSignature}) into /Contents.
 *
 * Page order and page content are unchanged: the only page-level change is the
 * widget annotation added to the first page's /Annots. Anything to be appended
 * (the audit-trail page) must be appended before calling {@link signPdf}.
 */
import { pdflibAddPlaceholder } from "@signpdf/placeholder-pdf-lib";
import { SignPdf } from "@signpdf/signpdf";
import { DEFAULT_BYTE_RANGE_PLACEHOLDER, SUBFILTER_ETSI_CADES_DETACHED, Signer } from "@signpdf/utils";
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFInvalidObject,
  PDFName,
  PDFNumber,
  PDFRef,
  PDFStream,
  PDFString,
  type PDFObject,
} from "pdf-lib";
import { ServiceError } from "../../core/errors.js";
import { buildCmsSignature, type CmsSignatureOptions } from "../cms/cms-signature.js";
import type { SigningKey } from "../keys/signing-key.js";
import { signatureTimestampAttribute, type TimestampAuthority } from "../ltv/timestamp-authority.js";

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
}

/**
 * Returns `pdf` signed with `key` (PAdES B-B, SubFilter ETSI.CAdES.detached).
 *
 * `pdf` may be a PDFDocument already loaded (by {@link loadSignablePdf}, then
 * with the certificate page appended): it is then saved once, with the
 * placeholder, instead of saved by the caller and loaded and saved again here.
 * The document gets the signature field; do not use it afterwards.
 *
 * Throws {@link ServiceError} UNPROCESSABLE_DOCUMENT for a PDF that cannot be
 * read, is encrypted, has no pages, or already carries a signature (re-saving
 * it would invalidate that signature). Errors of the key (an HSM that is down)
 * and of the timestamp authority are passed on as they are.
 */
export async function signPdf(pdf: Buffer | PDFDocument, key: SigningKey, options: SignPdfOptions): Promise<Buffer> {
  if (!(options.signingTime instanceof Date) || Number.isNaN(options.signingTime.getTime())) {
    throw new TypeError("signPdf: signingTime must be a valid Date");
  }
  const { timestampAuthority } = options;
  const reservation =
    options.contentsReservationBytes ?? defaultReservation(key) + (timestampAuthority ? TIMESTAMP_TOKEN_RESERVATION_BYTES : 0);
  if (!Number.isInteger(reservation) || reservation < 1024) {
    throw new RangeError(`signPdf: contentsReservationBytes must be an integer of at least 1024, got ${reservation}`);
  }

  const prepared = await withPlaceholder(pdf, options, reservation);
  const cmsOptions: CmsSignatureOptions = timestampAuthority
    ? { unsignedAttributes: async (signature) => [signatureTimestampAttribute(await timestampAuthority.requestTimestampToken(signature))] }
    : {};
  const signer = new CmsSigner(key, reservation, cmsOptions);
  return new SignPdf().sign(prepared, signer);
}

function defaultReservation(key: SigningKey): number {
  const certificates = key.chainDer.reduce((total, der) => total + der.length, key.certificateDer.length);
  const needed = Math.ceil((certificates + RESERVATION_MARGIN_BYTES) / 1024) * 1024;
  return Math.max(DEFAULT_CONTENTS_RESERVATION_BYTES, needed);
}

/**
 * The @signpdf Signer: @signpdf/signpdf calls `sign()` once with the bytes the
 * /ByteRange covers (the file before and after the /Contents hex string,
 * concatenated) and writes the returned DER CMS into that hex string.
 */
class CmsSigner extends Signer {
  constructor(
    private readonly key: SigningKey,
    private readonly reservation: number,
    private readonly cmsOptions: CmsSignatureOptions,
  ) {
    super();
  }

  override async sign(signedBytes: Buffer): Promise<Buffer> {
    const cms = await buildCmsSignature(this.key, signedBytes, this.cmsOptions);
    if (cms.length > this.reservation) {
      throw new Error(
        `the CMS signature is ${cms.length} bytes but only ${this.reservation} bytes are reserved for /Contents; ` +
          `raise contentsReservationBytes`,
      );
    }
    return cms;
  }
}

/**
 * Loads `pdf` and checks it can be signed: readable, not encrypted, not signed
 * already, at least one page. Throws {@link ServiceError} UNPROCESSABLE_DOCUMENT
 * saying which.
 */
export async function loadSignablePdf(pdf: Uint8Array): Promise<PDFDocument> {
  let document: PDFDocument;
  try {
    // ignoreEncryption, then isEncrypted: pdf-lib's EncryptedPDFError is
    // compiled to ES5 and thrown as a plain Error, so instanceof cannot tell it.
    document = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  } catch (error) {
    throw unreadable(error);
  }
  return checkSignable(document);
}

/** Throws {@link ServiceError} UNPROCESSABLE_DOCUMENT if `document` cannot be signed (see {@link loadSignablePdf}). */
function checkSignable(document: PDFDocument): PDFDocument {
  if (document.isEncrypted) {
    throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The PDF is encrypted; remove its password protection before signing it.");
  }
  let pages: number;
  try {
    pages = document.getPageCount();
  } catch (error) {
    throw unreadable(error); // no catalog or page tree
  }
  if (hasSignature(document)) {
    throw new ServiceError(
      "UNPROCESSABLE_DOCUMENT",
      "The PDF is already signed; signing it again would invalidate its existing signatures.",
    );
  }
  if (pages === 0) throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The PDF has no pages.");
  return document;
}

/** Loads `pdf` (unless loaded already), checks it can be signed, and returns it saved with the signature placeholder. */
async function withPlaceholder(pdf: Buffer | PDFDocument, options: SignPdfOptions, reservation: number): Promise<Buffer> {
  const document = pdf instanceof PDFDocument ? checkSignable(pdf) : await loadSignablePdf(pdf);
  try {
    normaliseAcroForm(document);
    const fieldName = options.fieldName ?? freeFieldName(document);
    pdflibAddPlaceholder({
      pdfDoc: document,
      // replaced below by signatureDictionary(); required by the library's types
      name: options.signerName,
      reason: options.reason ?? "",
      location: options.location ?? "",
      contactInfo: options.contactInfo ?? "",
      signingTime: options.signingTime,
      signatureLength: 2 * reservation, // the library's "length" counts hex digits
      subFilter: SUBFILTER_ETSI_CADES_DETACHED,
    });
    const widget = lastField(document);
    const signatureRef = widget.get(PDFName.of("V"));
    if (!(signatureRef instanceof PDFRef)) throw new Error("the placeholder has no signature dictionary reference");
    document.context.assign(signatureRef, signatureDictionary(document, options, reservation));
    widget.set(PDFName.of("T"), PDFHexString.fromText(fieldName));

    // useObjectStreams: false writes a classic cross-reference table, which
    // every validator and incremental-update writer reads; the placeholder
    // library keeps the signature dictionary out of object streams by itself
    // (PDFInvalidObject), so this is for compatibility, not correctness.
    // updateFieldAppearances: false, so existing form fields are not redrawn
    // (and no font is embedded for them): the content stays as it was.
    // objectsPerTick: Infinity, as pdf-lib otherwise yields every 50 objects
    // with setTimeout(0), a millisecond of idle time each (20 pages: 2 ms).
    const bytes = await document.save({
      useObjectStreams: false,
      updateFieldAppearances: false,
      addDefaultPage: false,
      objectsPerTick: Infinity,
    });
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw unreadable(error);
  }
}

function unreadable(error: unknown): ServiceError {
  return new ServiceError("UNPROCESSABLE_DOCUMENT", "The document is not a readable PDF (damaged or truncated).", {
    cause: error,
  });
}

/**
 * The signature dictionary, replacing the library's: optional entries are left
 * out instead of written empty, and text strings are UTF-16BE hex strings (the
 * library's PDFString.of cannot encode names outside Latin-1). /ByteRange and
 * /Contents are the placeholders @signpdf/signpdf looks for, in that order. It
 * is a PDFInvalidObject (raw bytes) so pdf-lib never puts it into an object
 * stream, where its bytes could not be patched.
 */
function signatureDictionary(document: PDFDocument, options: SignPdfOptions, reservation: number): PDFInvalidObject {
  const { context } = document;
  const placeholder = PDFName.of(DEFAULT_BYTE_RANGE_PLACEHOLDER);
  const entries: Record<string, PDFObject> = {
    Type: PDFName.of("Sig"),
    Filter: PDFName.of("Adobe.PPKLite"),
    SubFilter: PDFName.of(SUBFILTER_ETSI_CADES_DETACHED),
    ByteRange: context.obj([PDFNumber.of(0), placeholder, placeholder, placeholder]),
    Contents: PDFHexString.of("0".repeat(2 * reservation)),
    M: PDFString.fromDate(options.signingTime),
    Name: PDFHexString.fromText(options.signerName),
  };
  if (options.reason) entries.Reason = PDFHexString.fromText(options.reason);
  if (options.location) entries.Location = PDFHexString.fromText(options.location);
  if (options.contactInfo) entries.ContactInfo = PDFHexString.fromText(options.contactInfo);
  const dictionary = context.obj(entries);
  const bytes = new Uint8Array(dictionary.sizeInBytes());
  dictionary.copyBytesInto(bytes, 0);
  return PDFInvalidObject.of(bytes);
}

/**
 * Whether any object of the document is a signature: a dictionary with a
 * /ByteRange, or a signature field (/FT /Sig) with a value. Checks every
 * indirect object and the direct objects inside it (a field's /V may be direct).
 */
function hasSignature(document: PDFDocument): boolean {
  const byteRange = PDFName.of("ByteRange");
  const fieldType = PDFName.of("FT");
  const value = PDFName.of("V");
  const sig = PDFName.of("Sig");
  const isSignature = (object: PDFObject, depth: number): boolean => {
    if (depth > 32) return false;
    if (object instanceof PDFDict) {
      if (object.has(byteRange)) return true;
      if (object.get(fieldType) === sig && object.has(value)) return true;
      return object.values().some((child) => isSignature(child, depth + 1));
    }
    if (object instanceof PDFArray) return object.asArray().some((child) => isSignature(child, depth + 1));
    return false;
  };
  // of a stream, only its dictionary matters
  return document.context
    .enumerateIndirectObjects()
    .some(([, object]) => isSignature(object instanceof PDFStream ? object.dict : object, 0));
}

/**
 * Works around two shortcuts of pdflibAddPlaceholder with an existing AcroForm:
 * an indirect /Fields array would be replaced by a new empty one (dropping the
 * document's form fields), and an indirect /SigFlags would throw. Both are
 * made direct, with the same contents.
 */
function normaliseAcroForm(document: PDFDocument): void {
  const acroForm = document.catalog.lookupMaybe(PDFName.of("AcroForm"), PDFDict);
  if (!acroForm) return;
  const fields = acroForm.get(PDFName.of("Fields"));
  if (fields instanceof PDFRef) {
    const array = document.context.lookupMaybe(fields, PDFArray);
    acroForm.set(PDFName.of("Fields"), array ?? document.context.obj([]));
  }
  const sigFlags = acroForm.get(PDFName.of("SigFlags"));
  if (sigFlags instanceof PDFRef) {
    const number = document.context.lookupMaybe(sigFlags, PDFNumber);
    acroForm.set(PDFName.of("SigFlags"), number ?? PDFNumber.of(0));
  }
}

/** "Signature1", or the first "SignatureN" no top-level field of the document uses. */
function freeFieldName(document: PDFDocument): string {
  const acroForm = document.catalog.lookupMaybe(PDFName.of("AcroForm"), PDFDict);
  const fields = acroForm?.lookupMaybe(PDFName.of("Fields"), PDFArray);
  const used = new Set<string>();
  for (const item of fields?.asArray() ?? []) {
    const field = item instanceof PDFRef ? document.context.lookup(item) : item;
    const name = field instanceof PDFDict ? field.get(PDFName.of("T")) : undefined;
    if (name instanceof PDFString || name instanceof PDFHexString) used.add(name.decodeText());
  }
  for (let n = 1; ; n++) if (!used.has(`Signature${n}`)) return `Signature${n}`;
}

/** The widget pdflibAddPlaceholder appended to /AcroForm /Fields. */
function lastField(document: PDFDocument): PDFDict {
  const acroForm = document.catalog.lookup(PDFName.of("AcroForm"), PDFDict);
  const fields = acroForm.lookup(PDFName.of("Fields"), PDFArray);
  return fields.lookup(fields.size() - 1, PDFDict);
}
