import { STATUS_CODES, type ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { asServiceError } from "../core/errors.js";
import { passedThrough } from "../core/transient-bytes.js";

/** What a route answers: a JSON value (or {@link JsonWithBase64}), or raw bytes with their content type. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Set for raw bytes (`body` a Buffer); JSON otherwise. */
  contentType?: string;
}

/** Bytes encoded per piece written: whole 3-byte groups, so each piece's base64 has no padding. */
const BASE64_PIECE_BYTES = 3 * 16 * 1024;

/**
 * JSON text with one base64 string in it, written in pieces: the base64 text
 * of a large document is never built whole. `before` and `after` are the JSON
 * text around the string's contents, quotes included.
 */
export class JsonWithBase64 {
  private readonly bytes: Buffer;

  constructor(
    private readonly before: string,
    bytes: Uint8Array,
    private readonly after: string,
  ) {
    this.bytes = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get byteLength(): number {
    return Buffer.byteLength(this.before) + Math.ceil(this.bytes.length / 3) * 4 + Buffer.byteLength(this.after);
  }

  *pieces(): Generator<string> {
    yield this.before;
    for (let at = 0; at < this.bytes.length; at += BASE64_PIECE_BYTES) {
      const piece = this.bytes.toString("base64", at, at + BASE64_PIECE_BYTES);
      yield piece;
      passedThrough(piece.length); // written by now, in a copy that is garbage once sent
    }
    yield this.after;
  }
}

/** Writes the reply and its X-Request-Id in one writeHead, Node's fast path for headers. */
export async function sendReply(res: ServerResponse, reply: Reply, requestId: string): Promise<void> {
  // already answered by a connection limit (a body too slow) while the route still waited for it
  if (res.headersSent) return;
  const raw = reply.contentType !== undefined;
  const payload = raw || reply.body instanceof JsonWithBase64 ? (reply.body as Buffer | JsonWithBase64) : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    ...reply.headers,
    "X-Request-Id": requestId,
    "Content-Type": raw ? reply.contentType! : "application/json; charset=utf-8",
    "Content-Length": payload instanceof JsonWithBase64 ? payload.byteLength : Buffer.byteLength(payload),
    "Cache-Control": "no-store",
  });
  if (!(payload instanceof JsonWithBase64)) return void res.end(payload);
  // A client that goes away mid-answer ends the pipeline; the gateway logs it as such, there is no one left to answer.
  await pipeline(payload.pieces(), res).catch(() => {});
}

/**
 * The JSON error body of every /v1 route: {code, error, message, requestId, details}.
 * `details` is always there: one {field, issue} per problem, empty when the error is not about a field.
 */
export function errorReply(error: unknown, requestId: string): Reply {
  const serviceError = asServiceError(error);
  const headers: Record<string, string> = {};
  if (serviceError.retryAfterSeconds !== undefined) headers["Retry-After"] = String(serviceError.retryAfterSeconds);
  if (serviceError.code === "UNAUTHENTICATED") headers["WWW-Authenticate"] = 'Bearer realm="docservice"';
  // The rest of an oversized body is not worth reading: end the connection after this answer.
  if (serviceError.code === "PAYLOAD_TOO_LARGE") headers.Connection = "close";
  return {
    status: serviceError.httpStatus,
    headers,
    body: {
      code: serviceError.code,
      error: STATUS_CODES[serviceError.httpStatus],
      message: serviceError.message,
      requestId,
      details: serviceError.details ?? [],
    },
  };
}
