import { SourceFormat } from "../../gen/ts-proto/docservice/v1/conversion.js";

/** A format LibreOffice converts well, with the import filter that reads it into Writer. */
export interface FormatSpec {
  name: string;
  proto: SourceFormat;
  /** LibreOffice import filter: no guessing, and HTML or text land in Writer, not Writer/Web. */
  importFilter: string;
  /** What a human would call the format in an error message. */
  label: string;
}

export const FORMATS: readonly FormatSpec[] = [
  { name: "docx", proto: SourceFormat.SOURCE_FORMAT_DOCX, importFilter: "MS Word 2007 XML", label: "DOCX (Word 2007+)" },
  { name: "doc", proto: SourceFormat.SOURCE_FORMAT_DOC, importFilter: "MS Word 97", label: "DOC (Word 97-2003)" },
  { name: "odt", proto: SourceFormat.SOURCE_FORMAT_ODT, importFilter: "writer8", label: "ODT (OpenDocument Text)" },
  { name: "rtf", proto: SourceFormat.SOURCE_FORMAT_RTF, importFilter: "Rich Text Format", label: "RTF" },
  { name: "txt", proto: SourceFormat.SOURCE_FORMAT_TXT, importFilter: "Text (encoded)", label: "plain text" },
  { name: "html", proto: SourceFormat.SOURCE_FORMAT_HTML, importFilter: "HTML (StarWriter)", label: "HTML" },
  // Rendered to HTML first (markdown-source.ts), then read as HTML.
  { name: "md", proto: SourceFormat.SOURCE_FORMAT_MD, importFilter: "HTML (StarWriter)", label: "Markdown" },
];

export const FORMAT_NAMES = FORMATS.map((f) => f.name);

export function formatByName(name: string): FormatSpec | undefined {
  return FORMATS.find((f) => f.name === name.toLowerCase());
}

export function formatByProto(proto: SourceFormat): FormatSpec | undefined {
  return FORMATS.find((f) => f.proto === proto);
}
