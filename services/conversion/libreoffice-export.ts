import type { ConvertTarget } from "./convert-target.js";

/** How LibreOffice writes a target: the file extension, the export filter and its settings. */
export interface LibreOfficeExport {
  extension: "pdf" | "docx";
  filter: string;
  settings: Record<string, boolean | number>;
}

/**
 * The same on the warm and the cold path. Blank pages LibreOffice inserts for
 * odd/even section breaks are kept, as Word's PDF export and Gotenberg do (the
 * UNO API default drops them). PDF/A and PDF/UA are the PDF filter's own
 * modes: it embeds every font, tags the structure, and writes the XMP
 * metadata the standards ask for.
 */
export function libreOfficeExport(target: ConvertTarget): LibreOfficeExport {
  if (target.to === "docx") return { extension: "docx", filter: "MS Word 2007 XML", settings: {} };
  const settings: Record<string, boolean | number> = { IsSkipEmptyPages: false };
  if (target.pdfa) {
    settings.SelectPdfVersion = target.pdfa === "2b" ? 2 : 3;
    // PDF/A wants an appearance for every annotation, which LibreOffice 7.4 does not write for
    // comments: they are left out, as Gotenberg and Word's PDF/A export leave them out by default.
    settings.ExportNotes = false;
  }
  if (target.pdfua) settings.PDFUACompliance = true;
  return { extension: "pdf", filter: "writer_pdf_Export", settings };
}

/** As unoserver's filter options: "Name=value" (it reads true/false and integers back). */
export function unoserverFilterOptions(exported: LibreOfficeExport): string[] {
  return Object.entries(exported.settings).map(([name, value]) => `${name}=${value}`);
}

/** As `soffice --convert-to`'s argument: extension, filter, and the settings as typed JSON. */
export function convertToArgument(exported: LibreOfficeExport): string {
  const settings = Object.fromEntries(
    Object.entries(exported.settings).map(([name, value]) => [name, { type: typeof value === "boolean" ? "boolean" : "long", value: String(value) }]),
  );
  return `${exported.extension}:${exported.filter}${Object.keys(settings).length > 0 ? `:${JSON.stringify(settings)}` : ""}`;
}
