import { ServiceError, type FieldIssue } from "./errors.js";

/**
 * An error as it crosses to another thread: a ServiceError keeps its code;
 * anything else is an internal error with its name and text for the log.
 */
export type SerializedError =
  | { service: true; code: ServiceError["code"]; message: string; details?: FieldIssue[]; retryAfterSeconds?: number }
  | { service: false; name: string; message: string; stack?: string };

export function serializeError(error: unknown): SerializedError {
  if (error instanceof ServiceError) {
    return { service: true, code: error.code, message: error.message, details: error.details, retryAfterSeconds: error.retryAfterSeconds };
  }
  const plain = error instanceof Error ? error : new Error(String(error));
  return { service: false, name: plain.name, message: plain.message, stack: plain.stack };
}

export function deserializeError(error: SerializedError): Error {
  if (error.service) {
    return new ServiceError(error.code, error.message, { details: error.details, retryAfterSeconds: error.retryAfterSeconds });
  }
  const plain = new Error(error.message);
  plain.name = error.name;
  if (error.stack) plain.stack = error.stack;
  return plain;
}
