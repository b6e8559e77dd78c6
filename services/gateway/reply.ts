import { STATUS_CODES, type ServerResponse } from "node:http";
import { asServiceError } from "../core/errors.js";

/** What a route answers: a JSON value, or raw bytes with their content type. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Set for raw bytes (`body` a Buffer); JSON otherwise. */
  contentType?: string;
}

/** Writes the reply and its X-Request-Id in one writeHead, Node's fast path for headers. */
export function sendReply(res: ServerResponse, reply: Reply, requestId: string): void {
  const raw = reply.contentType !== undefined;
  const payload = raw ? (reply.body as Buffer) : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    ...reply.headers,
    "X-Request-Id": requestId,
    "Content-Type": raw ? reply.contentType! : "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(payload),
    "Cache-Control": "no-store",
  });
  res.end(payload);
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
