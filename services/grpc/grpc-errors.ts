import { Metadata, status as GrpcStatus, type ServiceError as GrpcServiceError, type StatusObject } from "@grpc/grpc-js";
import { ServiceError, asServiceError, isErrorCode, type FieldIssue } from "../core/errors.js";

const CODE_KEY = "docservice-error-code";
// Binary ("-bin") metadata: details may hold any text, ASCII-only metadata values may not.
const DETAILS_KEY = "docservice-error-details-bin";
const RETRY_AFTER_KEY = "retry-after";

/** A ServiceError as a gRPC status, with our code and details in trailing metadata. */
export function toGrpcStatus(error: unknown): Partial<StatusObject> {
  const serviceError = asServiceError(error);
  const metadata = new Metadata();
  metadata.set(CODE_KEY, serviceError.code);
  if (serviceError.details) metadata.set(DETAILS_KEY, Buffer.from(JSON.stringify(serviceError.details)));
  if (serviceError.retryAfterSeconds !== undefined) {
    metadata.set(RETRY_AFTER_KEY, String(serviceError.retryAfterSeconds));
  }
  return { code: serviceError.grpcStatus, details: serviceError.message, metadata };
}

/** A gRPC client error back as the ServiceError the server raised, or as UNAVAILABLE/TIMEOUT when the call never got an answer. */
export function fromGrpcError(error: GrpcServiceError, serviceName: string): ServiceError {
  const code = String(error.metadata?.get(CODE_KEY)[0] ?? "");
  if (isErrorCode(code)) {
    const details = error.metadata.get(DETAILS_KEY)[0];
    const retryAfter = error.metadata.get(RETRY_AFTER_KEY)[0];
    return new ServiceError(code, error.details, {
      details: details ? (JSON.parse(details.toString()) as FieldIssue[]) : undefined,
      retryAfterSeconds: retryAfter ? Number(retryAfter) : undefined,
    });
  }
  if (error.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return new ServiceError("TIMEOUT", `${serviceName} did not answer in time.`, { cause: error });
  }
  if (error.code === GrpcStatus.UNAVAILABLE) {
    return new ServiceError("UNAVAILABLE", `${serviceName} is unavailable.`, { retryAfterSeconds: 1, cause: error });
  }
  return new ServiceError("INTERNAL", `${serviceName} failed.`, { cause: error });
}
