import { create as contentDisposition } from "content-disposition";
import { ServiceError } from "../core/errors.js";
import type { ConversionApi } from "./conversion-service.js";
import { DOCX_CONTENT_TYPE, parseConvertTarget } from "./convert-target.js";
import { FORMAT_NAMES, formatByName } from "./source-format.js";
import { readMultipartFile } from "../request-body/multipart-file.js";
import { queryValues, type Route } from "../contracts/route.js";

/** POST /v1/convert?from=docx[&to=pdf|docx][&pdfa=2b|3b][&pdfua=true]: a multipart upload in, the PDF (or DOCX) out. */
export function convertRoute(conversion: ConversionApi, maxBytes: number, maxBodyBytes: number): Route {
  return {
    method: "POST",
    path: "/v1/convert",
    operationId: "convert",
    summary:
      "Convert a document to PDF, keeping tables and formatting, or to DOCX. Send it as multipart/form-data with one file part named `file`. " +
      "`pdfa=2b` or `pdfa=3b` makes an archivable PDF/A (every font embedded, XMP metadata), `pdfua=true` a tagged, accessible PDF/UA; both may be combined. " +
      "`to=docx` writes a Word document from any source but DOCX; it needs the local LibreOffice backend.",
    query: [
      { name: "from", description: `Format of the document: ${FORMAT_NAMES.join(", ")}.`, required: true, schema: { type: "string", enum: FORMAT_NAMES } },
      { name: "to", description: "Output format: pdf (default) or docx.", required: false, schema: { type: "string", enum: ["pdf", "docx"] } },
      { name: "pdfa", description: "PDF/A conformance of a PDF output: 2b or 3b (ISO 19005-2, -3, level B).", required: false, schema: { type: "string", enum: ["2b", "3b"] } },
      { name: "pdfua", description: "true for a PDF/UA (ISO 14289-1) PDF output.", required: false, schema: { type: "string", enum: ["true", "false"] } },
    ],
    requestBody: {
      contentType: "multipart/form-data",
      schema: { type: "object", required: ["file"], properties: { file: { type: "string", format: "binary", description: `The document, at most ${maxBytes} bytes.` } } },
    },
    successStatus: 200,
    responseContentTypes: ["application/pdf", DOCX_CONTENT_TYPE],
    responseSchema: { type: "string", format: "binary" },
    errors: {
      400: "`from` is missing or not supported, `to`, `pdfa` or `pdfua` is invalid (or `to=docx` from DOCX, or on the Gotenberg backend), the body is not multipart/form-data, or it has no `file` part.",
      401: "The API key is missing, malformed or revoked.",
      413: "The document, or what it unpacks to, is too large.",
      415: "The file is not in the format `from` names (e.g. a PDF or an image sent as DOCX).",
      422: "The document is encrypted, damaged or truncated, its Markdown or HTML nests too deep or takes too long to read (the message names the limit), or the converter could not read it.",
      503: "Every converter is busy with a full queue, or the backend is down; see Retry-After.",
      504: "The conversion took longer than the limit and was stopped.",
    },
    async handle(context) {
      const query = queryValues(context, ["from", "to", "pdfa", "pdfua"]);
      const format = formatByName(query.from);
      if (!format) {
        throw new ServiceError("VALIDATION_ERROR", `Query parameter "from" must be one of ${FORMAT_NAMES.join(", ")}.`, {
          details: [{ field: "from", issue: query.from ? `"${query.from}" is not one of ${FORMAT_NAMES.join(", ")}` : "is required" }],
        });
      }
      const target = parseConvertTarget(query, format);
      const file = await readMultipartFile(context.request, "file", maxBytes, maxBodyBytes);
      const output = await conversion.convert({ document: file.bytes, format, target, filename: file.filename || `document.${format.name}` });
      const headers: Record<string, string> = { "Content-Disposition": contentDisposition(output.filename) };
      if (target.to === "pdf") headers["X-Page-Count"] = String(output.pageCount);
      return { status: 200, contentType: output.contentType, body: output.bytes, headers };
    },
  };
}
