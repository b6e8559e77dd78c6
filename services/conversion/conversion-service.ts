import { basename, extname } from "node:path";
import { PDFDocument } from "pdf-lib";
import { ServiceError } from "../core/errors.js";
import { inSpan } from "../core/tracing.js";
import { measuredConversion, targetName } from "./conversion-metrics.js";
import { contentTypeOf, PDF, type ConvertTarget } from "./convert-target.js";
import type { Converter } from "./converter.js";
import { checkDocument, type DocumentLimits } from "./document-check.js";
import { SanitizerThread } from "./sanitizer-thread.js";
import type { SanitizedFormat } from "./sanitizer-worker.js";
import { formatByName, type FormatSpec } from "./source-format.js";

export interface ConvertInput {
  document: Buffer;
  format: FormatSpec;
  /** PDF when not given. */
  target?: ConvertTarget;
  /** The client's file name, used to name the output. */
  filename: string;
}

export interface ConvertOutput {
  bytes: Buffer;
  contentType: string;
  filename: string;
  /** Pages of a PDF output; 0 for DOCX. */
  pageCount: number;
}

/** ConversionService as callers see it, in-process or over gRPC. */
export interface ConversionApi {
  convert(input: ConvertInput): Promise<ConvertOutput>;
}

export interface ConversionLimits extends DocumentLimits {
  maxDocumentBytes: number;
}

/** Source formats rewritten before conversion, by format name (Markdown becomes HTML). */
const REWRITTEN_SOURCES: Partial<Record<string, SanitizedFormat>> = { md: "markdown", html: "html", odt: "odt", rtf: "rtf" };

/** Checks the document, converts it with the configured backend, and describes the output. */
export class ConversionService implements ConversionApi {
  private readonly sanitizer = new SanitizerThread();

  constructor(
    private readonly converter: Converter,
    private readonly limits: ConversionLimits,
  ) {}

  /** One conversion: a span of its caller's trace, counted on /metrics. */
  convert(input: ConvertInput): Promise<ConvertOutput> {
    const target = input.target ?? PDF;
    const attributes = { "docservice.conversion.source": input.format.name, "docservice.conversion.target": targetName(target) };
    return inSpan("convert", { attributes }, () => measuredConversion(input.format.name, target, () => this.convertChecked(input)));
  }

  private async convertChecked(input: ConvertInput): Promise<ConvertOutput> {
    if (input.document.length > this.limits.maxDocumentBytes) throw tooLarge(this.limits.maxDocumentBytes);
    await checkDocument(input.document, input.format, this.limits);
    const target = input.target ?? PDF;
    const [document, format] = await this.sourceForConverter(input.document, input.format);
    const bytes = await this.converter.convert(document, format, target);
    const contentType = contentTypeOf(target);
    if (target.to === "docx") return { bytes, contentType, filename: outputFilename(input.filename, "docx"), pageCount: 0 };
    const pdf = await readPdf(bytes);
    if (target.pdfua && !pdf.getTitle()?.trim()) {
      throw new ServiceError("UNPROCESSABLE_DOCUMENT", "PDF/UA needs a document title, and the document has none: set its Title property (File > Properties in Word or LibreOffice) and convert it again.");
    }
    return { bytes, contentType, filename: outputFilename(input.filename, "pdf"), pageCount: pdf.getPageCount() };
  }

  health(): Promise<void> {
    return this.converter.health();
  }

  /**
   * What the backend converts: Markdown as HTML, and HTML (Markdown passes raw
   * HTML through) sanitized, since LibreOffice would otherwise fetch what the
   * page references, from the network and from local files. ODT and RTF lose
   * the references LibreOffice 7.4 follows despite its locked-down profile
   * (libreoffice-profile.ts): ODT's external background images and template,
   * RTF's INCLUDEPICTURE and the other fields that read files.
   */
  private async sourceForConverter(document: Buffer, format: FormatSpec): Promise<[Buffer, FormatSpec]> {
    const rewrite = REWRITTEN_SOURCES[format.name];
    if (rewrite === undefined) return [document, format];
    return [await this.sanitizer.sanitize(document, rewrite), rewrite === "markdown" ? formatByName("html")! : format];
  }
}

export function tooLarge(maxBytes: number): ServiceError {
  return new ServiceError("PAYLOAD_TOO_LARGE", `The document is larger than ${maxBytes} bytes.`);
}

/** "Quarterly report.docx" → "Quarterly report.pdf"; anything unusable → "document.pdf". */
export function outputFilename(original: string, extension: "pdf" | "docx"): string {
  const name = basename(original.replace(/\\/g, "/"));
  const stem = name.slice(0, name.length - extname(name).length).replace(/[\u0000-\u001f\u007f"]/g, "").trim();
  return `${stem || "document"}.${extension}`;
}

async function readPdf(pdf: Buffer): Promise<PDFDocument> {
  try {
    return await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  } catch (error) {
    throw new ServiceError("INTERNAL", "The converter produced an unreadable PDF.", { cause: error });
  }
}
