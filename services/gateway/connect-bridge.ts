import { fromBinary, toBinary, type DescMethod, type DescMethodUnary } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, type ConnectRouter } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { rpcAccess } from "../access/access-rules.js";
import { admit, type CredentialCheck } from "../access/admit.js";
import { asServiceError, isServerFault, ServiceError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { MessageLimits } from "../core/message-limits.js";
import type { Bridge } from "../contracts/bridge.js";

export const clientIpKey = createContextKey("", { description: "address of the calling client" });
export const requestIdKey = createContextKey("", { description: "the request's X-Request-Id" });

/** The methods a bridge exposes: the unary ones that someone besides the gateway may call. */
export function bridgedMethods(bridge: Bridge): DescMethod[] {
  return bridge.descriptor.methods.filter((method) => method.methodKind === "unary" && rpcAccess(bridge.descriptor.typeName, method.name) !== "gateway");
}

/**
 * The streaming methods, by Connect path, each with what a caller is told:
 * they stream both ways, which Connect carries over HTTP/2 only and gRPC-Web
 * not at all, and the gateway serves HTTP/1.1.
 */
export function grpcOnlyMethods(bridges: Bridge[]): Map<string, string> {
  const methods = new Map<string, string>();
  for (const bridge of bridges) {
    for (const method of bridge.descriptor.methods.filter((m) => m.methodKind !== "unary")) {
      const name = `${bridge.descriptor.name}.${method.name}`;
      methods.set(`/${bridge.descriptor.typeName}/${method.name}`, `${name} streams both ways and is served over gRPC only (HTTP/2, on the gRPC port); over HTTP, use its /v1 route.`);
    }
  }
  return methods;
}

/**
 * Registers the bridged methods of each service on the Connect router, each
 * admitting its callers by services/access/access-rules.ts. Messages cross
 * from protobuf-es to ts-proto through their binary encoding, so one generic
 * handler serves every method and no message type is written by hand. An
 * error that is the platform's fault (an INTERNAL among them) is logged with
 * the request's id, as /v1 logs its own: the caller only sees "internal".
 */
export function bridgeRoutes(bridges: Bridge[], credentials: CredentialCheck, messages: MessageLimits, logger: Logger) {
  return (router: ConnectRouter) => {
    for (const bridge of bridges) {
      const api = bridge.api as Record<string, (request: unknown) => Promise<unknown>>;
      for (const method of bridgedMethods(bridge)) {
        const service = bridge.descriptor.typeName;
        const access = rpcAccess(service, method.name);
        const grpcMethod = bridge.definition[method.localName];
        // Held to the method's limit as the bytes arrive and as they inflate; compression only where a document travels.
        const limits = { readMaxBytes: messages.rpc(service, method.name), acceptCompression: messages.rpcMayBeCompressed(service, method.name) ? [compressionGzip, compressionBrotli] : [] };
        router.rpc(method as DescMethodUnary, async (request, context) => {
          try {
            const internal = toInternal(request, method, grpcMethod);
            const caller = await admit(access, { authorization: context.requestHeader.get("authorization"), fromGateway: false }, credentials);
            // Who calls, and from where, come from the connection and the presented key, never from the message.
            if ("clientIp" in internal) internal.clientIp = context.values.get(clientIpKey);
            if ("callerKeyId" in internal) internal.callerKeyId = caller.kind === "apiKey" ? caller.principal.keyId : "";
            const response = await api[method.localName](internal);
            return fromBinary(method.output, grpcMethod.responseSerialize(response));
          } catch (error) {
            const serviceError = asServiceError(error);
            if (isServerFault(serviceError)) {
              logger.error({ err: error, cause: error instanceof Error ? error.cause : undefined, requestId: context.values.get(requestIdKey), rpc: `${service}/${method.name}` }, "request failed");
            }
            throw toConnectError(serviceError);
          }
        }, limits);
      }
    }
  };
}

/** The Connect message as the service's own (ts-proto) type; one that will not cross (absurd nesting overflows the encoders' recursion) is the caller's mistake. */
function toInternal(request: Parameters<typeof toBinary>[1], method: DescMethod, grpcMethod: Bridge["definition"][string]): Record<string, unknown> {
  try {
    return grpcMethod.requestDeserialize(Buffer.from(toBinary(method.input, request)));
  } catch {
    throw new ServiceError("VALIDATION_ERROR", "The message cannot be read: it is nested too deeply or holds invalid values.", { details: [{ field: "message", issue: "does not decode" }] });
  }
}

/** Connect codes are numerically gRPC's, so the service error's gRPC status carries over as is. */
function toConnectError(serviceError: ServiceError): ConnectError {
  const metadata = new Headers({ "docservice-error-code": serviceError.code });
  if (serviceError.retryAfterSeconds !== undefined) metadata.set("retry-after", String(serviceError.retryAfterSeconds));
  return new ConnectError(serviceError.message, serviceError.grpcStatus as number as Code, metadata);
}
