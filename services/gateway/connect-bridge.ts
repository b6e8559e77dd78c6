import { fromBinary, toBinary, type DescMethodUnary, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { asServiceError, ServiceError } from "../core/errors.js";
import type { GrpcDefinition } from "../core/unary-api.js";
import { constantTimeEquals } from "./admin-token.js";
import { bearerToken } from "./bearer.js";

/** Who may call a method over Connect / gRPC-Web: anyone, or holders of the admin token. */
export type Access = "public" | "admin";

/** One service exposed over Connect: its descriptor (protobuf-es), its grpc-js definition (ts-proto), and the API that serves it. */
export interface Bridge {
  descriptor: DescService;
  definition: GrpcDefinition;
  api: object;
  access: Record<string, Access>;
}

export const clientIpKey = createContextKey("", { description: "address of the calling client" });

/**
 * Registers every unary method of each bridged service on the Connect router.
 * Messages cross from protobuf-es to ts-proto through their binary encoding,
 * so one generic handler serves every method and no message type is written
 * by hand. Methods not listed in `access` are not exposed.
 */
export function bridgeRoutes(bridges: Bridge[], adminToken: string | undefined) {
  return (router: ConnectRouter) => {
    for (const bridge of bridges) {
      const api = bridge.api as Record<string, (request: unknown) => Promise<unknown>>;
      for (const method of bridge.descriptor.methods) {
        const access = bridge.access[method.localName];
        if (method.methodKind !== "unary" || !access) continue;
        const grpcMethod = bridge.definition[method.localName];
        router.rpc(method as DescMethodUnary, async (request, context) => {
          if (access === "admin") requireAdmin(context, adminToken);
          const internal = grpcMethod.requestDeserialize(Buffer.from(toBinary(method.input, request)));
          // Rate limits key on the caller's address: it comes from the connection, never from the message.
          if ("clientIp" in internal) internal.clientIp = context.values.get(clientIpKey);
          try {
            const response = await api[method.localName](internal);
            return fromBinary(method.output, grpcMethod.responseSerialize(response));
          } catch (error) {
            throw toConnectError(error);
          }
        });
      }
    }
  };
}

function requireAdmin(context: HandlerContext, adminToken: string | undefined): void {
  if (!adminToken) throw toConnectError(new ServiceError("FORBIDDEN", "Admin calls are disabled: DOCSERVICE_ADMIN_TOKEN is not set."));
  if (!constantTimeEquals(bearerToken(context.requestHeader.get("authorization")), adminToken)) {
    throw toConnectError(new ServiceError("UNAUTHENTICATED", "This method needs the admin token as a Bearer token."));
  }
}

/** Connect codes are numerically gRPC's, so the service error's gRPC status carries over as is. */
function toConnectError(error: unknown): ConnectError {
  const serviceError = asServiceError(error);
  const metadata = new Headers({ "docservice-error-code": serviceError.code });
  if (serviceError.retryAfterSeconds !== undefined) metadata.set("retry-after", String(serviceError.retryAfterSeconds));
  return new ConnectError(serviceError.message, serviceError.grpcStatus as number as Code, metadata);
}
