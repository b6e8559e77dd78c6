/**
 * LibreOffice's PDF export settings, the same on the warm and the cold path.
 * Blank pages LibreOffice inserts for odd/even section breaks are kept, as
 * Word's PDF export and Gotenberg do (the UNO API default drops them).
 */
const PDF_EXPORT: Record<string, boolean> = { IsSkipEmptyPages: false };

/** As unoserver's filter options: "Name=value". */
export const UNOSERVER_PDF_OPTIONS = Object.entries(PDF_EXPORT).map(([name, value]) => `${name}=${value}`);

/** As soffice --convert-to's JSON filter options. */
export const CONVERT_TO_PDF_FILTER = `pdf:writer_pdf_Export:${JSON.stringify(
  Object.fromEntries(Object.entries(PDF_EXPORT).map(([name, value]) => [name, { type: "boolean", value: String(value) }])),
)}`;
