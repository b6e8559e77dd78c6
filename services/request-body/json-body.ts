import type { IncomingMessage } from "node:http";
import { ServiceError, validationError } from "../core/errors.js";
import { jsonShapeIssue, MAX_JSON_DEPTH } from "../core/json-shape.js";
import { Base64FieldExtractor, type Base64Verdict } from "./base64-field.js";
import { passedThrough } from "../core/transient-bytes.js";

const tooLarge = (maxBytes: number) => new ServiceError("PAYLOAD_TOO_LARGE", `The request body is larger than ${maxBytes} bytes.`);

/** Where the bytes of a body go as they arrive, and what is made of them at its end. */
interface BodySink<T> {
  write(chunk: Buffer): void;
  end(): T;
}

/**
 * Reads a JSON request body of at most `maxBytes`. A declared Content-Length
 * over the limit is refused before any byte is read; a streamed body as soon
 * as it passes the limit. Either way the 413 goes out at once; the gateway
 * reads a bounded rest of the body and closes the connection
 * (gateway/unread-body.ts).
 */
export async function readJsonBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  return parseJson(await readBody(request, maxBytes, new WholeBody()));
}

/** The body's bytes, kept whole. */
class WholeBody implements BodySink<Buffer> {
  private readonly chunks: Buffer[] = [];

  write(chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  end(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
  }
}

export interface JsonWithBytes {
  value: unknown;
  /** The decoded base64 string, when it was standard base64; a buffer alone in its ArrayBuffer. */
  bytes?: Buffer;
}

/** A string the standard base64 rule judges as it judged the original. */
const STAND_INS: Record<Base64Verdict, string> = { empty: "", valid: "AAAA", invalid: "=" };

/**
 * Reads a JSON body (as {@link readJsonBody}, with the same answers to the
 * same mistakes) whose string at `path` (object keys from the top, e.g.
 * ["document", "base64"]) is a base64 document: that string is decoded as it
 * streams in, never held as text. In `value` it is replaced by a short
 * stand-in that the standard base64 rule judges alike, so a schema reports on
 * it what it would have reported on the original; the decoded bytes are
 * `bytes`.
 */
export async function readJsonBodyWithBytes(request: IncomingMessage, maxBytes: number, path: readonly [...string[], string]): Promise<JsonWithBytes> {
  const { text, field } = await readBody(request, maxBytes, new Base64FieldExtractor(path, maxBytes));
  const value = parseJson(text);
  const holder = objectAt(value, path.slice(0, -1));
  const key = path.at(-1)!;
  // A string there is the last one extracted: any later one at the same place would have replaced it.
  if (!field || !holder || !Object.hasOwn(holder, key) || typeof holder[key] !== "string") return { value };
  const { verdict, bytes } = field.finish();
  holder[key] = STAND_INS[verdict];
  return { value, bytes };
}

function objectAt(value: unknown, keys: readonly string[]): Record<string, unknown> | undefined {
  let at = value;
  for (const key of keys) {
    if (!isObject(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return isObject(at) ? at : undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Deepest a whole body may nest: the free-form fields' own limit and the few levels around them. */
const MAX_BODY_DEPTH = MAX_JSON_DEPTH + 8;

/**
 * The body's JSON value. JSON.parse does not recurse, but much of what reads
 * the value after it does (schemas, JSON.stringify), so a body nested past any
 * route's need is refused here, before any of that sees it.
 */
function parseJson(text: Buffer): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text.toString("utf8"));
  } catch (error) {
    throw new ServiceError("VALIDATION_ERROR", `The request body is not valid JSON: ${(error as Error).message}`, {
      details: [{ field: "body", issue: "is not valid JSON" }],
    });
  }
  const tooDeep = jsonShapeIssue(value, "", { maxDepth: MAX_BODY_DEPTH });
  if (tooDeep) throw validationError([tooDeep]);
  return value;
}

function readBody<T>(request: IncomingMessage, maxBytes: number, sink: BodySink<T>): Promise<T> {
  const contentType = request.headers["content-type"] ?? "";
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(contentType)) {
    return Promise.reject(
      new ServiceError("UNSUPPORTED_MEDIA_TYPE", "Send the request body as JSON with Content-Type: application/json.", {
        details: [{ field: "Content-Type", issue: "must be application/json" }],
      }),
    );
  }
  if (Number(request.headers["content-length"] ?? 0) > maxBytes) return Promise.reject(tooLarge(maxBytes));

  // Listeners are written inline, not named: this runs for every request, and the TypeScript loader names each named function it creates (a defineProperty apiece).
  return new Promise((resolve, reject) => {
    let received = 0;
    let refused = false;
    request.on("data", (chunk: Buffer) => {
      if (refused) return;
      received += chunk.length;
      try {
        if (received > maxBytes) throw tooLarge(maxBytes);
        sink.write(chunk);
        passedThrough(chunk.length);
      } catch (error) {
        // answered now, not once the body ends: a body past its limit may never end
        refused = true;
        reject(error as Error);
      }
    });
    request.on("end", () => {
      if (refused) return;
      try {
        resolve(sink.end());
      } catch (error) {
        reject(error as Error);
      }
    });
    request.on("close", () => {
      if (!request.complete) reject(new ServiceError("VALIDATION_ERROR", "The request body was cut off.", { details: [{ field: "body", issue: "was cut off" }] }));
    });
  });
}
