import { fromBinary, toBinary, type DescMethodUnary, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import type { Principal } from "../../gen/ts-proto/docservice/v1/keys.js";
import { asServiceError, ServiceError } from "../core/errors.js";
import type { GrpcDefinition } from "../core/unary-api.js";
import { constantTimeEquals } from "./admin-token.js";
import { bearerToken } from "./bearer.js";

/** Who may call a method over Connect / gRPC-Web: anyone, holders of an API key, or holders of the admin token. */
export type Access = "public" | "apiKey" | "admin";

export interface BridgeAuth {
  adminToken: string | undefined;
  /** The owner of an API key; rejects with UNAUTHENTICATED for an unknown or revoked key. */
  authenticate(apiKey: string): Promise<Principal>;
}

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
export function bridgeRoutes(bridges: Bridge[], auth: BridgeAuth) {
  return (router: ConnectRouter) => {
    for (const bridge of bridges) {
      const api = bridge.api as Record<string, (request: unknown) => Promise<unknown>>;
      for (const method of bridge.descriptor.methods) {
        const access = bridge.access[method.localName];
        if (method.methodKind !== "unary" || !access) continue;
        const grpcMethod = bridge.definition[method.localName];
        router.rpc(method as DescMethodUnary, async (request, context) => {
          const internal = grpcMethod.requestDeserialize(Buffer.from(toBinary(method.input, request)));
          // Rate limits key on the caller's address: it comes from the connection, never from the message.
          if ("clientIp" in internal) internal.clientIp = context.values.get(clientIpKey);
          try {
            if (access === "admin") requireAdmin(context, auth.adminToken);
            // Who calls comes from the presented key, never from the message.
            if (access === "apiKey") internal.callerKeyId = (await requireApiKey(context, auth)).keyId;
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
  if (!adminToken) throw new ServiceError("FORBIDDEN", "Admin calls are disabled: DOCSERVICE_ADMIN_TOKEN is not set.");
  if (!constantTimeEquals(bearerToken(context.requestHeader.get("authorization")), adminToken)) {
    throw new ServiceError("UNAUTHENTICATED", "This method needs the admin token as a Bearer token.");
  }
}

function requireApiKey(context: HandlerContext, auth: BridgeAuth): Promise<Principal> {
  const apiKey = bearerToken(context.requestHeader.get("authorization"));
  if (!apiKey) throw new ServiceError("UNAUTHENTICATED", "This method needs an API key as a Bearer token.");
  return auth.authenticate(apiKey);
}

/** Connect codes are numerically gRPC's, so the service error's gRPC status carries over as is. */
function toConnectError(error: unknown): ConnectError {
  const serviceError = asServiceError(error);
  const metadata = new Headers({ "docservice-error-code": serviceError.code });
  if (serviceError.retryAfterSeconds !== undefined) metadata.set("retry-after", String(serviceError.retryAfterSeconds));
  return new ConnectError(serviceError.message, serviceError.grpcStatus as number as Code, metadata);
}
