import { create as contentDisposition } from "content-disposition";
import { ServiceError } from "../core/errors.js";
import type { ConversionApi } from "../conversion/conversion-service.js";
import { FORMAT_NAMES, formatByName } from "../conversion/source-format.js";
import { readMultipartFile } from "./multipart-file.js";
import { queryValue, type Route } from "./route.js";

/** POST /v1/convert?from=docx: a multipart upload in, the PDF out. */
export function convertRoute(conversion: ConversionApi, maxBytes: number): Route {
  return {
    method: "POST",
    path: "/v1/convert",
    operationId: "convert",
    summary: "Convert a document to PDF, keeping tables and formatting. Send it as multipart/form-data with one file part named `file`.",
    query: [{ name: "from", description: `Format of the document: ${FORMAT_NAMES.join(", ")}.`, required: true, schema: { type: "string", enum: FORMAT_NAMES } }],
    requestBody: {
      contentType: "multipart/form-data",
      schema: { type: "object", required: ["file"], properties: { file: { type: "string", format: "binary", description: `The document, at most ${maxBytes} bytes.` } } },
    },
    successStatus: 200,
    responseContentType: "application/pdf",
    responseSchema: { type: "string", format: "binary" },
    errors: {
      400: "`from` is missing or not supported, the body is not multipart/form-data, or it has no `file` part.",
      401: "The API key is missing, malformed or revoked.",
      413: "The document, or what it unpacks to, is too large.",
      415: "The file is not in the format `from` names (e.g. a PDF or an image sent as DOCX).",
      422: "The document is encrypted, damaged or truncated, or the converter could not read it.",
      503: "Every converter is busy with a full queue, or the backend is down; see Retry-After.",
      504: "The conversion took longer than the limit and was stopped.",
    },
    async handle(context) {
      const from = queryValue(context, "from");
      const format = formatByName(from);
      if (!format) {
        throw new ServiceError("VALIDATION_ERROR", `Query parameter "from" must be one of ${FORMAT_NAMES.join(", ")}.`, {
          details: [{ field: "from", issue: from ? `"${from}" is not one of ${FORMAT_NAMES.join(", ")}` : "is required" }],
        });
      }
      const file = await readMultipartFile(context.request, "file", maxBytes);
      const output = await conversion.convert({ document: file.bytes, format, filename: file.filename || `document.${format.name}` });
      return {
        status: 200,
        contentType: "application/pdf",
        body: output.pdf,
        headers: { "Content-Disposition": contentDisposition(output.filename), "X-Page-Count": String(output.pageCount) },
      };
    },
  };
}
