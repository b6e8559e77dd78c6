import { status as GrpcStatus } from "@grpc/grpc-js";

/** One problem with one input field, as listed in an error's `details`. */
export interface FieldIssue {
  field: string;
  issue: string;
}

/**
 * The error vocabulary every service speaks. Each code has one HTTP status and
 * one gRPC status, so an error keeps its meaning across the gRPC hop and the
 * gateway.
 */
export const ERROR_CODES = {
  VALIDATION_ERROR: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  INVALID_CODE: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  UNAUTHENTICATED: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  FORBIDDEN: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  METHOD_NOT_ALLOWED: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED },
  CONFLICT: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS },
  PAYLOAD_TOO_LARGE: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT },
  UNPROCESSABLE_DOCUMENT: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION },
  RATE_LIMITED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  INTERNAL: { http: 500, grpc: GrpcStatus.INTERNAL },
  UNAVAILABLE: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
  TIMEOUT: { http: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CODES, value);
}

export interface ServiceErrorOptions {
  details?: FieldIssue[];
  /** For RATE_LIMITED and UNAVAILABLE: when the client may try again. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

/** An error meant for the caller: its message is safe to show. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: FieldIssue[] | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = "ServiceError";
    this.code = code;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  get grpcStatus(): GrpcStatus {
    return ERROR_CODES[this.code].grpc;
  }
}

/** Anything thrown, as a ServiceError; unknown errors become INTERNAL without leaking their text. */
export function asServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  return new ServiceError("INTERNAL", "An unexpected error occurred.", { cause: error });
}

export function validationError(details: FieldIssue[]): ServiceError {
  const summary = details.map((d) => `${d.field}: ${d.issue}`).join("; ");
  return new ServiceError("VALIDATION_ERROR", `Invalid request: ${summary}`, { details });
}
