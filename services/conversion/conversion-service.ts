import { basename, extname } from "node:path";
import { PDFDocument } from "pdf-lib";
import { ServiceError } from "../core/errors.js";
import type { Converter } from "./converter.js";
import { checkDocument, type DocumentLimits } from "./document-check.js";
import type { FormatSpec } from "./source-format.js";

export interface ConvertInput {
  document: Buffer;
  format: FormatSpec;
  /** The client's file name, used to name the PDF. */
  filename: string;
}

export interface ConvertOutput {
  pdf: Buffer;
  filename: string;
  pageCount: number;
}

/** ConversionService as callers see it, in-process or over gRPC. */
export interface ConversionApi {
  convert(input: ConvertInput): Promise<ConvertOutput>;
}

export interface ConversionLimits extends DocumentLimits {
  maxDocumentBytes: number;
}

/** Checks the document, converts it with the configured backend, and describes the PDF. */
export class ConversionService implements ConversionApi {
  constructor(
    private readonly converter: Converter,
    private readonly limits: ConversionLimits,
  ) {}

  async convert(input: ConvertInput): Promise<ConvertOutput> {
    if (input.document.length > this.limits.maxDocumentBytes) throw tooLarge(this.limits.maxDocumentBytes);
    await checkDocument(input.document, input.format, this.limits);
    const pdf = await this.converter.convert(input.document, input.format, input.filename);
    return { pdf, filename: pdfFilename(input.filename), pageCount: await pageCount(pdf) };
  }

  health(): Promise<void> {
    return this.converter.health();
  }
}

export function tooLarge(maxBytes: number): ServiceError {
  return new ServiceError("PAYLOAD_TOO_LARGE", `The document is larger than ${maxBytes} bytes.`);
}

/** "Quarterly report.docx" → "Quarterly report.pdf"; anything unusable → "document.pdf". */
export function pdfFilename(original: string): string {
  const name = basename(original.replace(/\\/g, "/"));
  const stem = name.slice(0, name.length - extname(name).length).replace(/[\u0000-\u001f\u007f"]/g, "").trim();
  return `${stem || "document"}.pdf`;
}

async function pageCount(pdf: Buffer): Promise<number> {
  try {
    return (await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true })).getPageCount();
  } catch (error) {
    throw new ServiceError("INTERNAL", "The converter produced an unreadable PDF.", { cause: error });
  }
}
