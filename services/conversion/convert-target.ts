import { OutputFormat, PdfaLevel } from "../../gen/ts-proto/docservice/v1/conversion.js";
import { validationError, type FieldIssue } from "../core/errors.js";
import type { FormatSpec } from "./source-format.js";

export type PdfaFlavour = "2b" | "3b";

/** What a document is converted to: a PDF (PDF/A and PDF/UA optional) or a DOCX. */
export type ConvertTarget = { to: "pdf"; pdfa?: PdfaFlavour; pdfua: boolean } | { to: "docx" };

export const PDF: ConvertTarget = { to: "pdf", pdfua: false };

export const DOCX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

const PDFA_FLAVOURS: readonly PdfaFlavour[] = ["2b", "3b"];

/**
 * The target named by the query parameters `to`, `pdfa` and `pdfua` ("" when
 * absent), for a document of `source`; every problem at once as a
 * VALIDATION_ERROR.
 */
export function parseConvertTarget(query: { to: string; pdfa: string; pdfua: string }, source: FormatSpec): ConvertTarget {
  const issues: FieldIssue[] = [];
  const to = query.to.toLowerCase() || "pdf";
  const pdfa = query.pdfa.toLowerCase();
  const pdfua = query.pdfua.toLowerCase();
  if (to !== "pdf" && to !== "docx") issues.push({ field: "to", issue: `"${query.to}" is not one of pdf, docx` });
  if (to === "docx" && source.name === "docx") issues.push({ field: "to", issue: "docx is the document's own format" });
  if (pdfa && !PDFA_FLAVOURS.includes(pdfa as PdfaFlavour)) issues.push({ field: "pdfa", issue: `"${query.pdfa}" is not one of ${PDFA_FLAVOURS.join(", ")}` });
  if (pdfua && pdfua !== "true" && pdfua !== "false") issues.push({ field: "pdfua", issue: `"${query.pdfua}" is not true or false` });
  if (to === "docx" && pdfa) issues.push({ field: "pdfa", issue: "applies to PDF output only" });
  if (to === "docx" && pdfua === "true") issues.push({ field: "pdfua", issue: "applies to PDF output only" });
  if (issues.length > 0) throw validationError(issues);
  return to === "docx" ? { to: "docx" } : { to: "pdf", pdfa: (pdfa || undefined) as PdfaFlavour | undefined, pdfua: pdfua === "true" };
}

export function contentTypeOf(target: ConvertTarget): string {
  return target.to === "docx" ? DOCX_CONTENT_TYPE : "application/pdf";
}

/** The target as the gRPC ConvertHeader carries it. */
export function targetToProto(target: ConvertTarget): { outputFormat: OutputFormat; pdfa: PdfaLevel; pdfua: boolean } {
  if (target.to === "docx") return { outputFormat: OutputFormat.OUTPUT_FORMAT_DOCX, pdfa: PdfaLevel.PDFA_LEVEL_UNSPECIFIED, pdfua: false };
  const pdfa = target.pdfa === "2b" ? PdfaLevel.PDFA_LEVEL_2B : target.pdfa === "3b" ? PdfaLevel.PDFA_LEVEL_3B : PdfaLevel.PDFA_LEVEL_UNSPECIFIED;
  return { outputFormat: OutputFormat.OUTPUT_FORMAT_PDF, pdfa, pdfua: target.pdfua };
}

/** The target of a gRPC ConvertHeader, checked by the same rules as the query parameters. */
export function targetFromProto(header: { outputFormat: OutputFormat; pdfa: PdfaLevel; pdfua: boolean }, source: FormatSpec): ConvertTarget {
  const to = header.outputFormat === OutputFormat.OUTPUT_FORMAT_DOCX ? "docx" : header.outputFormat === OutputFormat.OUTPUT_FORMAT_UNSPECIFIED || header.outputFormat === OutputFormat.OUTPUT_FORMAT_PDF ? "pdf" : String(header.outputFormat);
  const pdfa = header.pdfa === PdfaLevel.PDFA_LEVEL_2B ? "2b" : header.pdfa === PdfaLevel.PDFA_LEVEL_3B ? "3b" : header.pdfa === PdfaLevel.PDFA_LEVEL_UNSPECIFIED ? "" : String(header.pdfa);
  return parseConvertTarget({ to, pdfa, pdfua: header.pdfua ? "true" : "" }, source);
}
