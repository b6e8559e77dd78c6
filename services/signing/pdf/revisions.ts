/**
 * What the revisions after a signature changed, judged the way validators'
 * modification analysis does (ISO 32000-2 12.8.2.2; pyHanko's and EU DSS's
 * rules, simplified): adding signature fields and their widgets, filling an
 * empty signature field, and adding the DSS, document timestamps and form
 * bookkeeping are permitted; anything else that changes an object the signed
 * revision had (page content, the page tree, the document information, other
 * fields' values) is not.
 */
import { PDFArray, PDFDict, PDFName, PDFRawStream, PDFRef, type PDFObject } from "pdf-lib";
import { PdfFile } from "./pdf-file.js";

export interface LaterChanges {
  /** Every change after the revision is a permitted one (true when there is none). */
  permitted: boolean;
  /** The first change that is not, in words. */
  problem?: string;
}

const CATALOG_KEYS = new Set(["AcroForm", "DSS", "Extensions"]);
const ACRO_FORM_KEYS = new Set(["Fields", "SigFlags", "DA", "DR", "NeedAppearances"]);
const FILLED_FIELD_KEYS = new Set(["V", "AP", "F"]);

/** Judges what `file` changed after the revision that ends at byte `revisionEnd`. */
export function changesAfter(file: PdfFile, revisionEnd: number): LaterChanges {
  if (revisionEnd >= file.bytes.length) return { permitted: true };
  const ending = file.bytes.toString("latin1", Math.max(revisionEnd, file.bytes.length - 64));
  if (file.rebuilt || file.lastXrefOffset < revisionEnd || !/%%EOF\s*$/.test(ending)) {
    return { permitted: false, problem: "bytes were appended that are not an incremental update" };
  }
  const before = PdfFile.open(file.bytes.subarray(0, revisionEnd));
  const earlier = before.definitions();
  const catalogNumber = file.catalogRef.objectNumber;
  for (const [number, offset] of file.definitions()) {
    if (offset < revisionEnd || !earlier.has(number)) continue; // unchanged, or new
    const ref = PDFRef.of(number);
    const old = before.lookup(ref);
    const current = file.lookup(ref);
    const problem = judgeChange(number === catalogNumber, old, current, before, file);
    if (problem) return { permitted: false, problem: `object ${number} (${problem})` };
  }
  return { permitted: true };
}

function judgeChange(isCatalog: boolean, old: PDFObject | undefined, current: PDFObject | undefined, before: PdfFile, after: PdfFile): string | undefined {
  if (old instanceof PDFArray && current instanceof PDFArray) {
    if (!extends_(old, current)) return "an array lost or reordered entries";
    // an indirect /Fields, /Annots or DSS array: only signature fields and widgets, or DSS data, may join it
    const added = current.asArray().slice(old.size());
    return added.every((item) => isSignatureField(after, item) || isDssData(after, item)) ? undefined : "an array gained an entry other than a signature field";
  }
  if (!(old instanceof PDFDict) || !(current instanceof PDFDict)) return "an object was replaced";
  const changed = changedKeys(old, current);
  if (changed.length === 0) return undefined;
  if (isCatalog) return onlyKeys(changed, CATALOG_KEYS, "the catalog");
  const type = old.get(PDFName.of("Type"));
  if (type === PDFName.of("Page")) {
    if (changed.some((key) => key !== "Annots")) return `a page's ${changed.filter((key) => key !== "Annots").join(", ")} changed`;
    return newAnnotationsAreSignatureWidgets(old, current, before, after) ? undefined : "an annotation other than a signature widget was added to a page";
  }
  if (old.has(PDFName.of("Fields"))) return onlyKeys(changed, ACRO_FORM_KEYS, "the form");
  if (old.get(PDFName.of("FT")) === PDFName.of("Sig") && !old.has(PDFName.of("V"))) return onlyKeys(changed, FILLED_FIELD_KEYS, "an empty signature field");
  return `its ${changed.join(", ")} changed`;
}

function onlyKeys(changed: string[], allowed: Set<string>, what: string): string | undefined {
  const other = changed.filter((key) => !allowed.has(key));
  return other.length === 0 ? undefined : `${what}'s ${other.join(", ")} changed`;
}

function changedKeys(old: PDFDict, current: PDFDict): string[] {
  const keys = new Set([...old.keys(), ...current.keys()].map((key) => key.decodeText()));
  return [...keys].filter((key) => String(old.get(PDFName.of(key))) !== String(current.get(PDFName.of(key))));
}

/** `current` keeps every entry of `old`, in order, and only appends. */
function extends_(old: PDFArray, current: PDFArray): boolean {
  return old.size() <= current.size() && old.asArray().every((item, index) => String(item) === String(current.get(index)));
}

function isSignatureField(file: PdfFile, item: PDFObject): boolean {
  return file.resolve(file.resolveDict(item)?.get(PDFName.of("FT"))) === PDFName.of("Sig");
}

/** A certificate, OCSP response or CRL of a DSS: a stream with no /Type. */
function isDssData(file: PdfFile, item: PDFObject): boolean {
  const stream = file.resolve(item);
  return stream instanceof PDFRawStream && !stream.dict.has(PDFName.of("Type"));
}

function newAnnotationsAreSignatureWidgets(old: PDFDict, current: PDFDict, before: PdfFile, after: PdfFile): boolean {
  const oldAnnots = before.resolveArray(old.get(PDFName.of("Annots")))?.asArray() ?? [];
  const newAnnots = after.resolveArray(current.get(PDFName.of("Annots")))?.asArray() ?? [];
  const kept = new Set(oldAnnots.map(String));
  if (!oldAnnots.every((item) => newAnnots.some((candidate) => String(candidate) === String(item)))) return false;
  return newAnnots
    .filter((item) => !kept.has(String(item)))
    .every((item) => after.resolveDict(item)?.get(PDFName.of("Subtype")) === PDFName.of("Widget") && isSignatureField(after, item));
}
