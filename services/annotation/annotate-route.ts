import type { AnnotateRequest, AnnotationField } from "../../gen/ts-proto/docservice/v1/annotation.js";
import type { AnnotationApi } from "./annotation-service.js";
import { DOCX_CONTENT_TYPE } from "../conversion/convert-target.js";
import { validationError } from "../core/errors.js";
import { documentReply, documentReplySchema, documentSource, jsonSchema, parsedBody, type ParsedBody } from "../request-body/document-body.js";
import { queryValue, type Route } from "../contracts/route.js";
import { ANNOTATE_LIMITS, annotateSchema, type AnnotateJson } from "./annotate-request-schema.js";

/** POST /v1/annotate?to=docx|pdf: a DOCX template's content controls filled. */
export function annotateRoute(annotation: AnnotationApi, maxBodyBytes: number): Route {
  return {
    method: "POST",
    path: "/v1/annotate",
    operationId: "annotate",
    summary:
      "Fill a DOCX template: each field's value goes into the Word content controls (w:sdt) of the body, headers and footers whose tag is its `id` " +
      "or whose title is its `group`: text (plain or rich text controls), an image or a signature (picture controls), rows appended to a table (a control around a table). " +
      "Every field must find its controls and suit them, or nothing is filled and every problem is named. `to=pdf` converts the result.",
    query: [{ name: "to", description: "docx (default) or pdf.", required: false, schema: { type: "string", enum: ["docx", "pdf"] } }],
    requestBody: { contentType: "application/json", schema: jsonSchema(annotateSchema) },
    successStatus: 200,
    responseSchema: documentReplySchema("The filled DOCX, or its PDF.", [DOCX_CONTENT_TYPE, "application/pdf"]),
    errors: {
      400: `The request breaks a rule (\`to\`, a field without id or group, a value of the wrong shape) or a limit (at most ${ANNOTATE_LIMITS.maxFields} fields and ${ANNOTATE_LIMITS.maxDrawnSignatures} different signatures to draw, names and labels of at most ${ANNOTATE_LIMITS.maxLabelChars} characters); \`details\` lists every problem.`,
      401: "The API key is missing, malformed or revoked.",
      413: "The template (sent or fetched) or the request body is too large.",
      415: "The body is not JSON, or the template is not a DOCX (a PDF, an image, an ODT…).",
      422: `The template is damaged or encrypted, a field finds no control (or one of the wrong kind), the fields would fill more than ${ANNOTATE_LIMITS.maxControlFills} controls, an image is not a PNG or JPEG, or the URL could not be read; \`details\` lists every problem.`,
      503: "The converter (to=pdf) is busy or down; see Retry-After.",
      504: "Converting the filled document took longer than the limit.",
    },
    async handle(context) {
      const to = queryValue(context, "to") || "docx";
      if (to !== "docx" && to !== "pdf") throw validationError([{ field: "to", issue: `"${to}" is not one of docx, pdf` }]);
      const body = await parsedBody(context, annotateSchema, maxBodyBytes);
      const response = await annotation.annotate(toAnnotateRequest(body, to === "pdf"));
      return documentReply(response.document, response.contentType);
    },
  };
}

function toAnnotateRequest(parsed: ParsedBody<AnnotateJson>, toPdf: boolean): AnnotateRequest {
  const fields = parsed.body.fields.map(
    (field): AnnotationField => ({
      id: field.id ?? "",
      group: field.group ?? "",
      type: field.type,
      value: typeof field.value === "string" ? field.value : "",
      rows: Array.isArray(field.value) ? field.value.map((cells) => ({ cells })) : [],
      keepTextNodeStyles: field.options?.keepTextNodeStyles ?? false,
      copyRowStyle: field.options?.copyRowStyle ?? false,
      width: field.options?.dimensions?.width ?? 0,
      height: field.options?.dimensions?.height ?? 0,
      signerName: field.options?.signerName ?? "",
      topLabel: field.options?.topLabel ?? "",
      bottomLabel: field.options?.bottomLabel ?? "",
    }),
  );
  return { document: documentSource(parsed), fields, toPdf };
}
