import { z } from "zod";
import { validationError } from "../core/errors.js";
import { fieldIssues, type FieldIssueOptions } from "../core/field-issues.js";
import type { DocumentSource } from "../fetch/document-fetcher.js";
import { MAX_URL_CHARS, URL_TOO_LONG } from "../fetch/url-length.js";
import { readJsonBodyWithBytes } from "./json-body.js";
import { JsonWithBase64, type Reply } from "../contracts/reply.js";
import type { RequestContext } from "../contracts/route.js";

// JSON bodies that carry a document as {"document": {"base64": …} | {"url": …}}, and answers that return one.

/** Standard base64, padded (a pattern, so /openapi.json states it too); "" is left to the min-length rule. */
export const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const documentSchema = z
  .strictObject(
    {
      base64: z
        .string({ error: "must be a base64 string" })
        .min(1, "must not be empty")
        .regex(BASE64, "must be standard base64 (A–Z, a–z, 0–9, +, /, = padding)")
        .optional(),
      // the limit every caller's URL is held to (fetch/url-length.ts), here so /v1 names it with the body's other problems
      url: z.string({ error: "must be a string" }).min(1, "must not be empty").max(MAX_URL_CHARS, URL_TOO_LONG).optional(),
    },
    { error: "is required" },
  )
  .refine((value) => (value.base64 === undefined) !== (value.url === undefined), "must have exactly one of base64 or url")
  .meta({ oneOf: [{ required: ["base64"] }, { required: ["url"] }] });

/** JSON Schema of a zod schema, for /openapi.json. */
export function jsonSchema(schema: z.ZodType): object {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return rest;
}

/** A checked body, and its document decoded when it came as base64. */
export interface ParsedBody<T> {
  body: T;
  content?: Buffer;
}

/** Reads the body (the base64 document decoded as it streams in) and checks it; every problem in one 400, written as `issues` says. */
export async function parsedBody<T>(context: RequestContext, schema: z.ZodType<T>, maxBytes: number, issues: FieldIssueOptions = {}): Promise<ParsedBody<T>> {
  const { value, bytes } = await readJsonBodyWithBytes(context.request, maxBytes, ["document", "base64"]);
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(fieldIssues(result.error, issues));
  return { body: result.data, content: bytes };
}

export function documentSource({ body, content }: ParsedBody<{ document: { url?: string } }>): DocumentSource {
  return body.document.url !== undefined ? { url: body.document.url } : { content: content! };
}

/** `{"document":{"base64":…,"contentType":…}}`, the document's base64 written in pieces. */
export function documentReply(document: Uint8Array, contentType = "application/pdf"): Reply {
  return { status: 200, body: new JsonWithBase64('{"document":{"base64":"', document, `","contentType":${JSON.stringify(contentType)}}}`) };
}

/** JSON Schema of {@link documentReply}'s body. */
export function documentReplySchema(description: string, contentTypes: string[]): object {
  return {
    type: "object",
    required: ["document"],
    properties: {
      document: {
        type: "object",
        required: ["base64", "contentType"],
        properties: { base64: { type: "string", description }, contentType: { type: "string", enum: contentTypes } },
      },
    },
  };
}
