import { ServiceError } from "../core/errors.js";
import type { MessageLimits } from "../core/message-limits.js";
import type { GrpcDefinition } from "./unary-api.js";

/**
 * Largest unary gRPC message a client accepts or sends. Documents (25 MB by
 * default) travel inside Sign requests and responses, so gRPC's 4 MB default
 * is too small; conversion streams its documents in chunks and does not rely
 * on it. What a server accepts is per method (MessageLimits).
 */
export const GRPC_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * A client's channel: messages up to {@link GRPC_MAX_MESSAGE_BYTES}, and
 * connections of its own (not shared with the process's other channels to the
 * same address), so that {@link GRPC_CONNECTIONS_PER_BACKEND} channels hold
 * that many connections. An address that refuses is tried again at most 5 s
 * apart, so a backend that is back is used within seconds, not after
 * grpc-js's default backoff of up to two minutes.
 */
export const GRPC_CHANNEL_OPTIONS = {
  "grpc.max_receive_message_length": GRPC_MAX_MESSAGE_BYTES,
  "grpc.max_send_message_length": GRPC_MAX_MESSAGE_BYTES,
  "grpc.use_local_subchannel_pool": 1,
  "grpc.max_reconnect_backoff_ms": 5_000,
};

/**
 * Connections a client keeps to a backend, each call taking the least busy.
 * Behind a Kubernetes Service each connection reaches the pod kube-proxy
 * picked when it was made, and the server's max connection age makes it pick
 * again: calls so spread over the backend's pods, those a scale-up adds
 * included. One long-lived HTTP/2 connection would carry every call to one pod.
 * Through the Service rather than its pods' names: kube-proxy drops a leaving
 * pod at once, where cluster DNS may name it for another 30 s.
 */
export const GRPC_CONNECTIONS_PER_BACKEND = 8;

export interface GrpcConnectionLimits {
  grpcMaxConnectionIdleMs: number;
  grpcMaxConnectionAgeMs: number;
  grpcMaxConnectionAgeGraceMs: number;
  grpcMaxConcurrentStreams: number;
}

/** Pings a silent peer this often, and drops it when a ping goes unanswered this long: a vanished client does not hold its connection. */
const KEEPALIVE_TIME_MS = 60_000;
const KEEPALIVE_TIMEOUT_MS = 20_000;

/** grpc-js server options: the largest message of any method (each method is held to its own by {@link boundedDefinition}), and the connection limits. */
export function grpcServerOptions(limits: GrpcConnectionLimits, messages: MessageLimits): Record<string, number> {
  return {
    "grpc.max_receive_message_length": messages.largestRpc,
    "grpc.max_send_message_length": GRPC_MAX_MESSAGE_BYTES,
    "grpc.max_concurrent_streams": limits.grpcMaxConcurrentStreams,
    "grpc.max_connection_idle_ms": limits.grpcMaxConnectionIdleMs,
    "grpc.max_connection_age_ms": limits.grpcMaxConnectionAgeMs,
    "grpc.max_connection_age_grace_ms": limits.grpcMaxConnectionAgeGraceMs,
    "grpc.keepalive_time_ms": KEEPALIVE_TIME_MS,
    "grpc.keepalive_timeout_ms": KEEPALIVE_TIMEOUT_MS,
  };
}

/**
 * A message the server would not decode: not a valid encoding of its type
 * (grpc-js would answer a decoder's error with INTERNAL). Handlers receive it
 * in the message's place and answer its error.
 */
export class RefusedMessage {
  constructor(readonly error: ServiceError) {}
}

/**
 * The service's definition with each request decoder's failures turned into
 * RefusedMessage, and carrying its method's size limit, which grpc-js
 * (patches/@grpc+grpc-js) holds the message to as it arrives and as it
 * inflates (RESOURCE_EXHAUSTED past it), and whether the method takes
 * compressed messages at all (UNIMPLEMENTED when it does not).
 */
export function boundedDefinition(serviceName: string, definition: GrpcDefinition, messages: MessageLimits): GrpcDefinition {
  const bounded: GrpcDefinition = {};
  for (const [name, method] of Object.entries(definition)) {
    const requestDeserialize = (bytes: Buffer) => {
      try {
        return method.requestDeserialize(bytes);
      } catch {
        // a decoder's own error (a bad wire type, or a stack overflow on absurd nesting) says nothing the caller can use
        return new RefusedMessage(new ServiceError("VALIDATION_ERROR", "The message is not a valid encoding of its type.", { details: [{ field: "message", issue: "does not decode" }] }));
      }
    };
    const methodName = method.path.split("/").pop()!;
    const limits = { maxReceiveMessageLength: messages.rpc(serviceName, methodName), acceptsCompression: messages.rpcMayBeCompressed(serviceName, methodName) };
    bounded[name] = { ...method, requestDeserialize: Object.assign(requestDeserialize, limits) };
  }
  return bounded;
}
