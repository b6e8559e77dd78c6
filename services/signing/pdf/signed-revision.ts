/**
 * Appends one signed revision to a PDF as an incremental update: optionally
 * new pages (drawn into a scratch pdf-lib document and moved over), entries
 * of the document information, a signature field with an invisible widget,
 * and its signature dictionary, whose /Contents is filled last with what
 * `contents` returns for the SHA-256 of the bytes /ByteRange covers.
 *
 * Used for a PAdES signature (contents: a CMS) and for a document timestamp
 * (contents: an RFC 3161 token). The bytes received are kept as they are;
 * cost follows what is appended (the output's hash state has the rest).
 */
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFRef,
  type PDFObject,
} from "pdf-lib";
import { certificatePageSizeFor } from "../certificate-page/certificate-page.js";
import { freeSignatureFieldName, readDocumentForm, type DocumentForm } from "./document-form.js";
import { IncrementalUpdate, rawObject, serializeObject } from "./incremental-update.js";
import type { PdfFile } from "./pdf-file.js";
import type { PdfOutput } from "./pdf-output.js";

export interface SignedRevision {
  /** Signature dictionary entries besides /ByteRange and /Contents (/Type, /Filter, /SubFilter, /M, /Name, …). */
  dictionary: (file: PdfFile, update: IncrementalUpdate) => Record<string, PDFObject>;
  /** Bytes reserved for /Contents. */
  reservation: number;
  /** The /Contents value for the SHA-256 of the covered bytes; at most `reservation` bytes. */
  contents(digest: Buffer): Promise<Buffer>;
  /** Draws pages to append (only when the document carries no signature yet: pages added later are not permitted changes). */
  pages?: (document: PDFDocument, size: [number, number]) => Promise<void>;
  /** Text entries of the document information dictionary to set (first signature only, like pages). */
  info?: Record<string, string>;
  /** The field name; default the first free "SignatureN". */
  fieldName?: string;
  /** Called with the form before anything is written; throw to refuse. */
  check?: (form: DocumentForm) => void;
}

const BYTE_RANGE_WIDTH = 10;
const BYTE_RANGE_PLACEHOLDER = `/ByteRange [0 ${"*".repeat(BYTE_RANGE_WIDTH)} ${"*".repeat(BYTE_RANGE_WIDTH)} ${"*".repeat(BYTE_RANGE_WIDTH)}]`;

/** Appends the signed revision to `output` (whose bytes `file` reads). */
export async function appendSignedRevision(output: PdfOutput, file: PdfFile, revision: SignedRevision): Promise<void> {
  const form = readDocumentForm(file);
  revision.check?.(form);
  const update = new IncrementalUpdate(file);
  const catalog = file.catalog().clone(file.context);
  update.set(file.catalogRef, catalog);

  const addedPages = revision.pages && !form.signed ? await appendPages(file, update, revision.pages) : [];
  if (revision.info && !form.signed) setInfo(file, update, revision.info);

  const signatureRef = update.add(rawObject(Buffer.from(signatureDictionaryBytes(revision, file, update), "latin1")));
  const pageRef = addedPages[0] ?? firstPage(file);
  const widget = file.context.obj({
    Type: "Annot",
    Subtype: "Widget",
    FT: "Sig",
    T: PDFHexString.fromText(revision.fieldName ?? freeSignatureFieldName(form)),
    V: signatureRef,
    F: 132, // Print + Locked
    Rect: [0, 0, 0, 0],
    P: pageRef,
  });
  const widgetRef = update.add(widget);
  addAnnotation(file, update, pageRef, widgetRef, addedPages.includes(pageRef));
  addField(file, update, catalog, widgetRef);

  const { bytes: appended, offsets } = update.serialize();
  const base = output.append(appended);
  await fillSignature(output, base + offsets.get(signatureRef.objectNumber)!, revision);
}

function signatureDictionaryBytes(revision: SignedRevision, file: PdfFile, update: IncrementalUpdate): string {
  const entries = revision.dictionary(file, update);
  const rest = Object.entries(entries)
    .map(([key, value]) => `/${key} ${serializeObject(value).toString("latin1")}`)
    .join("\n");
  // /ByteRange and /Contents first and fixed-width, so they are found and patched in place
  return `<<\n${BYTE_RANGE_PLACEHOLDER}\n/Contents <${"0".repeat(2 * revision.reservation)}>\n${rest}\n>>`;
}

async function fillSignature(output: PdfOutput, signatureOffset: number, revision: SignedRevision): Promise<void> {
  const text = output.bytes.toString("latin1", signatureOffset, signatureOffset + 200);
  const rangeAt = signatureOffset + text.indexOf("/ByteRange [");
  const contentsStart = signatureOffset + text.indexOf("/Contents <") + "/Contents ".length;
  const contentsEnd = contentsStart + 2 * revision.reservation + 2;
  const range = [0, contentsStart, contentsEnd, output.length - contentsEnd];
  const rangeText = `/ByteRange [${range.map((n, i) => (i === 0 ? "0" : String(n).padEnd(BYTE_RANGE_WIDTH, " "))).join(" ")}]`;
  if (rangeText.length !== BYTE_RANGE_PLACEHOLDER.length) throw new Error("the file is too large for the /ByteRange placeholder");
  output.patch(rangeAt, rangeText);

  const contents = await revision.contents(output.digestAround(contentsStart, contentsEnd));
  if (contents.length > revision.reservation) {
    throw new Error(`the signature is ${contents.length} bytes but only ${revision.reservation} bytes are reserved for /Contents`);
  }
  output.patch(contentsStart + 1, contents.toString("hex"));
}

/** Draws pages into a scratch document numbered after the file's objects, and moves them to the end of the page tree. */
async function appendPages(file: PdfFile, update: IncrementalUpdate, draw: NonNullable<SignedRevision["pages"]>): Promise<PDFRef[]> {
  const pagesRef = file.catalog().get(PDFName.of("Pages"));
  const pages = file.resolveDict(pagesRef);
  if (!(pagesRef instanceof PDFRef) || !pages) throw new Error("the document has no page tree");

  const scratch = await PDFDocument.create({ updateMetadata: false });
  const scratchOwn = new Set(scratch.context.enumerateIndirectObjects().map(([ref]) => ref.objectNumber));
  scratch.context.largestObjectNumber = update.nextObjectNumber - 1;
  await draw(scratch, lastPageSize(file, pages));

  const added: PDFRef[] = [];
  for (const [ref, object] of scratch.context.enumerateIndirectObjects()) {
    if (scratchOwn.has(ref.objectNumber)) continue;
    if (object instanceof PDFDict && object.get(PDFName.of("Type")) === PDFName.of("Page")) {
      object.set(PDFName.of("Parent"), pagesRef);
      // what the page tree would otherwise pass down (a rotation, a crop box) is set on the page itself
      object.set(PDFName.of("Rotate"), PDFNumber.of(0));
      const mediaBox = object.get(PDFName.of("MediaBox"));
      if (mediaBox) object.set(PDFName.of("CropBox"), mediaBox);
      added.push(ref);
    }
    update.set(ref, object);
  }
  update.skipTo(scratch.context.largestObjectNumber + 1);

  const updatedPages = pages.clone(file.context);
  const kids = file.resolveArray(pages.get(PDFName.of("Kids")));
  const newKids = file.context.obj([...(kids?.asArray() ?? []), ...added]);
  updatedPages.set(PDFName.of("Kids"), newKids);
  const count = file.resolve(pages.get(PDFName.of("Count")));
  updatedPages.set(PDFName.of("Count"), PDFNumber.of((count instanceof PDFNumber ? count.asNumber() : 0) + added.length));
  update.set(pagesRef, updatedPages);
  return added.sort((a, b) => a.objectNumber - b.objectNumber);
}

/** The size the certificate page takes from the last page (inherited boxes and rotation followed). */
function lastPageSize(file: PdfFile, root: PDFDict): [number, number] {
  let node: PDFDict | undefined = root;
  let box: number[] | undefined;
  let rotation = 0;
  for (let depth = 0; node && depth < 64; depth++) {
    const mediaBox = numbers(file, node.get(PDFName.of("CropBox"))) ?? numbers(file, node.get(PDFName.of("MediaBox")));
    if (mediaBox?.length === 4) box = mediaBox;
    const rotate = file.resolve(node.get(PDFName.of("Rotate")));
    if (rotate instanceof PDFNumber) rotation = rotate.asNumber();
    const kids: PDFObject[] | undefined = file.resolveArray(node.get(PDFName.of("Kids")))?.asArray();
    if (!kids || kids.length === 0) break;
    node = file.resolveDict(kids.at(-1));
  }
  const [x1, y1, x2, y2] = box ?? [0, 0, 595.28, 841.89];
  return certificatePageSizeFor({ width: x2! - x1!, height: y2! - y1! }, rotation);
}

function numbers(file: PdfFile, value: PDFObject | undefined): number[] | undefined {
  const array = file.resolveArray(value);
  if (!array) return undefined;
  const items = array.asArray().map((item) => file.resolve(item));
  return items.every((item) => item instanceof PDFNumber) ? items.map((item) => (item as PDFNumber).asNumber()) : undefined;
}

function firstPage(file: PdfFile): PDFRef {
  let ref = file.catalog().get(PDFName.of("Pages"));
  for (let depth = 0; depth < 64; depth++) {
    const node = file.resolveDict(ref);
    if (!(ref instanceof PDFRef) || !node) break;
    const kids = file.resolveArray(node.get(PDFName.of("Kids")));
    if (!kids) return ref;
    if (kids.size() === 0) break;
    ref = kids.get(0);
  }
  throw new Error("the document has no pages");
}

function addAnnotation(file: PdfFile, update: IncrementalUpdate, pageRef: PDFRef, widgetRef: PDFRef, newPage: boolean): void {
  const page = newPage ? undefined : file.resolveDict(pageRef)?.clone(file.context);
  const target = newPage ? (update.changedObject(pageRef) as PDFDict) : page!;
  const annots = target.get(PDFName.of("Annots"));
  if (annots instanceof PDFRef) {
    const array = file.resolveArray(annots);
    update.set(annots, file.context.obj([...(array?.asArray() ?? []), widgetRef]));
    return;
  }
  target.set(PDFName.of("Annots"), file.context.obj([...(annots instanceof PDFArray ? annots.asArray() : []), widgetRef]));
  if (page) update.set(pageRef, page);
}

function addField(file: PdfFile, update: IncrementalUpdate, catalog: PDFDict, widgetRef: PDFRef): void {
  const existing = catalog.get(PDFName.of("AcroForm"));
  const acroForm = (file.resolveDict(existing) ?? file.context.obj({})).clone(file.context);
  const fields = acroForm.get(PDFName.of("Fields"));
  if (fields instanceof PDFRef) {
    update.set(fields, file.context.obj([...(file.resolveArray(fields)?.asArray() ?? []), widgetRef]));
  } else {
    acroForm.set(PDFName.of("Fields"), file.context.obj([...(fields instanceof PDFArray ? fields.asArray() : []), widgetRef]));
  }
  acroForm.set(PDFName.of("SigFlags"), PDFNumber.of(3)); // SignaturesExist | AppendOnly
  if (existing instanceof PDFRef) update.set(existing, acroForm);
  else catalog.set(PDFName.of("AcroForm"), acroForm);
}

function setInfo(file: PdfFile, update: IncrementalUpdate, entries: Record<string, string>): void {
  const existing = file.trailer.get(PDFName.of("Info"));
  const info = (file.resolveDict(existing) ?? file.context.obj({})).clone(file.context);
  for (const [key, value] of Object.entries(entries)) info.set(PDFName.of(key), PDFHexString.fromText(value));
  if (existing instanceof PDFRef) update.set(existing, info);
  else update.setTrailer("Info", update.add(info));
}
