import { STATUS_CODES, type ServerResponse } from "node:http";
import { asServiceError } from "../core/errors.js";

export interface JsonResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function sendJson(res: ServerResponse, response: JsonResponse): void {
  const payload = JSON.stringify(response.body);
  res.writeHead(response.status, {
    ...response.headers,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(payload),
    "Cache-Control": "no-store",
  });
  res.end(payload);
}

/** The JSON error body of every /v1 route: {code, error, message, requestId, details?}. */
export function errorResponse(error: unknown, requestId: string): JsonResponse {
  const serviceError = asServiceError(error);
  const headers: Record<string, string> = {};
  if (serviceError.retryAfterSeconds !== undefined) headers["Retry-After"] = String(serviceError.retryAfterSeconds);
  if (serviceError.code === "UNAUTHENTICATED") headers["WWW-Authenticate"] = 'Bearer realm="docservice"';
  return {
    status: serviceError.httpStatus,
    headers,
    body: {
      code: serviceError.code,
      error: STATUS_CODES[serviceError.httpStatus],
      message: serviceError.message,
      requestId,
      ...(serviceError.details ? { details: serviceError.details } : {}),
    },
  };
}
