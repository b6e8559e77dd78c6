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
  REQUEST_TIMEOUT: { http: 408, grpc: GrpcStatus.DEADLINE_EXCEEDED },
  PAYLOAD_TOO_LARGE: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  URI_TOO_LONG: { http: 414, grpc: GrpcStatus.INVALID_ARGUMENT },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT },
  EXPECTATION_FAILED: { http: 417, grpc: GrpcStatus.INVALID_ARGUMENT },
  UNPROCESSABLE_DOCUMENT: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION },
  RATE_LIMITED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  HEADERS_TOO_LARGE: { http: 431, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  INTERNAL: { http: 500, grpc: GrpcStatus.INTERNAL },
  // a capability this deployment was not set up with: asking again will not help, so no Retry-After
  NOT_CONFIGURED: { http: 501, grpc: GrpcStatus.UNIMPLEMENTED },
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

const DEFAULT_RETRY_AFTER_SECONDS = 1;

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
    // every 503 tells the client when to come back, also where the thrower did not know
    this.retryAfterSeconds = options.retryAfterSeconds ?? (code === "UNAVAILABLE" ? DEFAULT_RETRY_AFTER_SECONDS : undefined);
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

/**
 * An error that is the platform's fault, not the caller's: logged at error
 * level with its request id by every edge that answers it (/v1, Connect,
 * gRPC-Web). 501 is a capability this deployment lacks, the caller's to know.
 */
export function isServerFault(error: ServiceError): boolean {
  return error.httpStatus >= 500 && error.code !== "NOT_CONFIGURED";
}

export function validationError(details: FieldIssue[]): ServiceError {
  const summary = details.map((d) => `${d.field}: ${d.issue}`).join("; ");
  return new ServiceError("VALIDATION_ERROR", `Invalid request: ${summary}`, { details });
}
