import { z } from "zod";
import type { DocumentSource } from "../../gen/ts-proto/docservice/v1/signing.js";
import { validationError } from "../core/errors.js";
import { signRequestIssues } from "../signing/request/sign-request-schema.js";
import { readJsonBodyWithBytes } from "./json-body.js";
import { JsonWithBase64, type Reply } from "./reply.js";
import type { RequestContext } from "./route.js";

// JSON bodies that carry a document as {"document": {"base64": …} | {"url": …}}, and answers that return one.

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

/** Reads the body (the base64 document decoded as it streams in) and checks it; every problem in one 400. */
export async function parsedBody<T>(context: RequestContext, schema: z.ZodType<T>, maxBytes: number): Promise<ParsedBody<T>> {
  const { value, bytes } = await readJsonBodyWithBytes(context.request, maxBytes, ["document", "base64"]);
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(signRequestIssues(result.error));
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
