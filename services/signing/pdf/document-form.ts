import { PDFDict, PDFHexString, PDFName, PDFNumber, PDFString, type PDFObject } from "pdf-lib";
import type { PdfFile } from "./pdf-file.js";

/** What signing needs to know about a document's form and its signatures. */
export interface DocumentForm {
  /** Fully qualified names of the form's fields. */
  fieldNames: Set<string>;
  /** Some signature field has a value: the document is signed already. */
  signed: boolean;
  /** A certification signature (DocMDP) allows no changes at all (P 1). */
  noChangesAllowed: boolean;
  /** The /V of every signed signature field: its signature dictionary (or a reference to it). */
  signatureValues: PDFObject[];
}

const MAX_DEPTH = 32;

export function readDocumentForm(file: PdfFile): DocumentForm {
  const catalog = file.catalog();
  const acroForm = file.resolveDict(catalog.get(PDFName.of("AcroForm")));
  const fieldNames = new Set<string>();
  const signatureValues: PDFObject[] = [];
  const visit = (value: PDFObject | undefined, prefix: string, depth: number) => {
    const field = file.resolveDict(value);
    if (!field || depth > MAX_DEPTH) return;
    const name = textOf(field.get(PDFName.of("T")));
    const qualified = name === undefined ? prefix : prefix ? `${prefix}.${name}` : name;
    if (qualified) fieldNames.add(qualified);
    const signature = field.get(PDFName.of("V"));
    if (file.resolve(field.get(PDFName.of("FT"))) === PDFName.of("Sig") && signature) signatureValues.push(signature);
    for (const kid of file.resolveArray(field.get(PDFName.of("Kids")))?.asArray() ?? []) visit(kid, qualified, depth + 1);
  };
  for (const field of file.resolveArray(acroForm?.get(PDFName.of("Fields")))?.asArray() ?? []) visit(field, "", 0);
  return { fieldNames, signed: signatureValues.length > 0, signatureValues, noChangesAllowed: docMdpPermission(file, catalog) === 1 };
}

/** "Signature1", or the first "SignatureN" the form does not use. */
export function freeSignatureFieldName(form: DocumentForm): string {
  for (let n = 1; ; n++) if (!form.fieldNames.has(`Signature${n}`)) return `Signature${n}`;
}

function docMdpPermission(file: PdfFile, catalog: PDFDict): number | undefined {
  const perms = file.resolveDict(catalog.get(PDFName.of("Perms")));
  const signature = file.resolveDict(perms?.get(PDFName.of("DocMDP")));
  for (const reference of file.resolveArray(signature?.get(PDFName.of("Reference")))?.asArray() ?? []) {
    const params = file.resolveDict(file.resolveDict(reference)?.get(PDFName.of("TransformParams")));
    const permission = file.resolve(params?.get(PDFName.of("P")));
    if (permission instanceof PDFNumber) return permission.asNumber();
    if (params) return 2; // P's default
  }
  return undefined;
}

function textOf(value: PDFObject | undefined): string | undefined {
  return value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : undefined;
}

