import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { OutputFormat, PdfaLevel } from "../../gen/ts-proto/docservice/v1/conversion.js";
import { ServiceError } from "../core/errors.js";
import { parseConvertTarget, targetFromProto, targetToProto, type ConvertTarget } from "./convert-target.js";
import { convertToArgument, libreOfficeExport, unoserverFilterOptions } from "./libreoffice-export.js";
import { formatByName } from "./source-format.js";

const docx = formatByName("docx")!;
const html = formatByName("html")!;
const query = (q: Partial<Record<"to" | "pdfa" | "pdfua", string>>) => ({ to: "", pdfa: "", pdfua: "", ...q });
const fieldsOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ServiceError && error.code === "VALIDATION_ERROR");
    return (error.details ?? []).map((d) => d.field).sort();
  }
  assert.fail("no VALIDATION_ERROR");
};

describe("convert targets", () => {
  test("the query parameters: defaults, case, and every problem named at once", () => {
    assert.deepEqual(parseConvertTarget(query({}), docx), { to: "pdf", pdfa: undefined, pdfua: false });
    assert.deepEqual(parseConvertTarget(query({ to: "PDF", pdfa: "2B", pdfua: "true" }), docx), { to: "pdf", pdfa: "2b", pdfua: true });
    assert.deepEqual(parseConvertTarget(query({ to: "docx" }), html), { to: "docx" });
    assert.deepEqual(fieldsOf(() => parseConvertTarget(query({ to: "docx" }), docx)), ["to"]);
    assert.deepEqual(fieldsOf(() => parseConvertTarget(query({ to: "odt", pdfa: "1b", pdfua: "1" }), docx)), ["pdfa", "pdfua", "to"]);
    assert.deepEqual(fieldsOf(() => parseConvertTarget(query({ to: "docx", pdfa: "3b", pdfua: "true" }), html)), ["pdfa", "pdfua"]);
  });

  test("over gRPC the target survives the round trip, and the same rules apply", () => {
    const targets: ConvertTarget[] = [{ to: "pdf", pdfa: undefined, pdfua: false }, { to: "pdf", pdfa: "3b", pdfua: true }, { to: "docx" }];
    for (const target of targets) assert.deepEqual(targetFromProto(targetToProto(target), html), target);
    assert.deepEqual(fieldsOf(() => targetFromProto({ outputFormat: 7 as OutputFormat, pdfa: 9 as PdfaLevel, pdfua: false }, html)), ["pdfa", "to"]);
  });

  test("LibreOffice's export: filter, settings, and both ways of passing them", () => {
    const pdfa = libreOfficeExport({ to: "pdf", pdfa: "3b", pdfua: true });
    assert.deepEqual(unoserverFilterOptions(pdfa), ["IsSkipEmptyPages=false", "SelectPdfVersion=3", "ExportNotes=false", "PDFUACompliance=true"]);
    assert.equal(
      convertToArgument(pdfa),
      'pdf:writer_pdf_Export:{"IsSkipEmptyPages":{"type":"boolean","value":"false"},"SelectPdfVersion":{"type":"long","value":"3"},"ExportNotes":{"type":"boolean","value":"false"},"PDFUACompliance":{"type":"boolean","value":"true"}}',
    );
    assert.equal(convertToArgument(libreOfficeExport({ to: "docx" })), "docx:MS Word 2007 XML");
  });
});
