import { z } from "zod";
import type { AnnotateRequest, AnnotationField } from "../../gen/ts-proto/docservice/v1/annotation.js";
import type { AnnotationApi } from "./annotation-service.js";
import { DOCX_CONTENT_TYPE } from "../conversion/convert-target.js";
import { validationError } from "../core/errors.js";
import { documentReply, documentReplySchema, documentSchema, documentSource, jsonSchema, parsedBody, type ParsedBody } from "../request-body/document-body.js";
import { queryValue, type Route } from "../contracts/route.js";

const MAX_VALUE_CHARS = 16 * 1024 * 1024;

const label = z.string({ error: "must be a string" }).min(1, "must not be empty").max(200, "must be at most 200 characters").optional();

const fieldSchema = z
  .strictObject(
    {
      id: z.string({ error: "must be a string" }).min(1, "must not be empty").max(255, "must be at most 255 characters").optional().meta({ description: "The tag (w:tag) of the one content control to fill." }),
      group: z.string({ error: "must be a string" }).min(1, "must not be empty").max(255, "must be at most 255 characters").optional().meta({ description: "The title (w:alias) of every content control to fill." }),
      type: z.enum(["text", "image", "signature", "table"], { error: "must be one of text, image, signature, table" }),
      value: z
        .union([z.string().max(MAX_VALUE_CHARS, `must be at most ${MAX_VALUE_CHARS} characters`), z.array(z.array(z.string().max(10_000)).max(64)).min(1).max(10_000)], {
          error: "must be a string, or for a table an array of rows (arrays of strings)",
        })
        .optional()
        .meta({ description: "Text; an image as a data URI or base64 PNG or JPEG (image, signature); rows of cells' text (table). A signature may have options.signerName instead." }),
      options: z
        .strictObject(
          {
            keepTextNodeStyles: z.boolean({ error: "must be true or false" }).optional().meta({ description: "Text: keep the run style of the template's text." }),
            copyRowStyle: z.boolean({ error: "must be true or false" }).optional().meta({ description: "Table: style new rows as the table's last row." }),
            dimensions: z
              .strictObject({ width: z.number().int().min(1).max(10_000), height: z.number().int().min(1).max(10_000) }, { error: "must be {width, height}" })
              .optional()
              .meta({ description: "Image: its box in pixels (96 per inch); without it, fitted in the control's box." }),
            signerName: label.meta({ description: "Signature without a value: a signature image is drawn of this name." }),
            topLabel: label.meta({ description: "Drawn signature: a line above the name, e.g. \"Signed by\"." }),
            bottomLabel: label.meta({ description: "Drawn signature: a line below the name, e.g. the date." }),
          },
          { error: "must be an object" },
        )
        .optional(),
    },
    { error: "must be an object" },
  )
  .refine((field) => (field.id === undefined) !== (field.group === undefined), "must have exactly one of id and group")
  .refine((field) => field.value === undefined || (field.type === "table") === Array.isArray(field.value), { message: "must be an array of rows for a table, and a string otherwise", path: ["value"] })
  .refine((field) => field.value !== undefined || (field.type === "signature" && field.options?.signerName !== undefined), {
    message: "is required (a signature may have options.signerName instead)",
    path: ["value"],
  });

const annotateSchema = z.strictObject(
  { document: documentSchema, fields: z.array(fieldSchema, { error: "must be an array" }).min(1, "must have at least one field").max(1000, "must have at most 1000 fields") },
  { error: "must be a JSON object" },
);

type AnnotateJson = z.infer<typeof annotateSchema>;

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
      400: "The request breaks a rule (`to`, a field without id or group, a value of the wrong shape); `details` lists every problem.",
      401: "The API key is missing, malformed or revoked.",
      413: "The template (sent or fetched) or the request body is too large.",
      415: "The body is not JSON, or the template is not a DOCX (a PDF, an image, an ODT…).",
      422: "The template is damaged or encrypted, a field finds no control (or one of the wrong kind), an image is not a PNG or JPEG, or the URL could not be read; `details` lists every problem.",
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
