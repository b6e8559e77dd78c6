import type { AnnotateRequest, AnnotateResponse, AnnotationServiceService } from "../../gen/ts-proto/docservice/v1/annotation.js";
import type { ConversionApi, ConversionLimits } from "../conversion/conversion-service.js";
import { DOCX_CONTENT_TYPE } from "../conversion/convert-target.js";
import { checkDocument } from "../conversion/document-check.js";
import { formatByName } from "../conversion/source-format.js";
import { documentBytes, type FetchDocumentOptions } from "../fetch/document-fetcher.js";
import { ServiceError } from "../core/errors.js";
import type { UnaryApi } from "../grpc/unary-api.js";
import { checkAnnotateFields } from "./annotate-request-check.js";
import { DocxPackage } from "./docx-package.js";
import { fillTemplate } from "./fill-template.js";

export type AnnotationApi = UnaryApi<typeof AnnotationServiceService>;

const DOCX = formatByName("docx")!;

export interface AnnotationDeps {
  conversion: ConversionApi;
  limits: ConversionLimits;
  fetch: Omit<FetchDocumentOptions, "maxBytes">;
}

/** Fills DOCX templates (fill-template.ts), and converts the result when PDF is asked for; every caller's fields are held to /v1/annotate's rules (annotate-request-check.ts). */
export class AnnotationService implements AnnotationApi {
  constructor(private readonly deps: AnnotationDeps) {}

  async annotate(request: AnnotateRequest): Promise<AnnotateResponse> {
    // the fields' rules and limits, whoever sent the message, before the template is fetched or read
    checkAnnotateFields(request);
    const template = await documentBytes(request.document, { ...this.deps.fetch, maxBytes: this.deps.limits.maxDocumentBytes });
    await checkDocument(template, DOCX, this.deps.limits);
    const docx = openTemplate(template);
    await fillTemplate(docx, request.fields);
    const filled = docx.toBuffer();
    if (!request.toPdf) return { document: filled, contentType: DOCX_CONTENT_TYPE };
    const converted = await this.deps.conversion.convert({ document: filled, format: DOCX, filename: "document.docx" });
    return { document: converted.bytes, contentType: converted.contentType };
  }
}

function openTemplate(bytes: Buffer): DocxPackage {
  try {
    return DocxPackage.open(bytes);
  } catch (error) {
    if (error instanceof ServiceError) throw error; // the XML's size or depth, refused before parsing
    throw new ServiceError("UNPROCESSABLE_DOCUMENT", `The template's XML cannot be read: ${(error as Error).message.split("\n")[0]}.`, { cause: error });
  }
}
