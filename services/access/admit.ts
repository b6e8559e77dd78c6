import type { Principal } from "../../gen/ts-proto/docservice/v1/keys.js";
import { ServiceError } from "../core/errors.js";
import type { Access } from "./access-rules.js";
import { bearerToken } from "./bearer.js";
import { constantTimeEquals } from "./constant-time.js";

/** What a caller presented, whatever the transport. */
export interface Presented {
  /** The `authorization` header or metadata value. */
  authorization: string | null | undefined;
  /** The call comes from the gateway's identity (its client certificate, or the internal token). */
  fromGateway: boolean;
}

/** What checks credentials: the admin token, and the owner of an API key (UNAUTHENTICATED for an unknown or revoked one). */
export interface CredentialCheck {
  adminToken: string | undefined;
  authenticate(apiKey: string): Promise<Principal>;
}

/** KeyService's Authenticate, in process or over gRPC. */
export interface KeyAuthentication {
  authenticate(request: { apiKey: string }): Promise<{ principal?: Principal }>;
}

/** The credential check of a component: the admin token, and API keys resolved by KeyService when this component can reach it. */
export function credentialCheck(adminToken: string | undefined, keys: KeyAuthentication | undefined): CredentialCheck {
  return {
    adminToken,
    authenticate: keys
      ? async (apiKey) => (await keys.authenticate({ apiKey })).principal!
      : () => Promise.reject(new ServiceError("UNAVAILABLE", "This service cannot check API keys: set KEYS_SERVICE_ADDR so it can ask KeyService.")),
  };
}

export type Caller =
  | { kind: "gateway" }
  | { kind: "anyone" }
  | { kind: "admin" }
  | { kind: "apiKey"; apiKey: string; principal: Principal };

/** Admits a caller under `access`, or throws UNAUTHENTICATED (no or wrong credential) / PERMISSION_DENIED (not allowed at all). */
export async function admit(access: Access, presented: Presented, check: CredentialCheck): Promise<Caller> {
  if (presented.fromGateway) return { kind: "gateway" };
  switch (access) {
    case "public":
      return { kind: "anyone" };
    case "apiKey": {
      const apiKey = bearerToken(presented.authorization);
      if (!apiKey) throw new ServiceError("UNAUTHENTICATED", "Send the API key as `Authorization: Bearer <key>`.");
      return { kind: "apiKey", apiKey, principal: await check.authenticate(apiKey) };
    }
    case "admin":
      requireAdminToken(presented.authorization, check.adminToken);
      return { kind: "admin" };
    case "gateway":
      throw new ServiceError("FORBIDDEN", "Only the gateway may call this method.");
  }
}

function requireAdminToken(authorization: string | null | undefined, adminToken: string | undefined): void {
  if (!adminToken) throw new ServiceError("FORBIDDEN", "Admin calls are disabled: DOCSERVICE_ADMIN_TOKEN is not set.");
  if (!constantTimeEquals(bearerToken(authorization), adminToken)) {
    throw new ServiceError("UNAUTHENTICATED", "This needs the admin token: `Authorization: Bearer <DOCSERVICE_ADMIN_TOKEN>`.");
  }
}
