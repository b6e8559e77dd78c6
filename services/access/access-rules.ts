/**
 * Who may call what: every RPC of every service and every /v1 route, in one
 * table. The /v1 routes, Connect and gRPC all admit callers through it, and a
 * test fails when a method or route has no rule.
 *
 * - public:  anyone.
 * - apiKey:  a valid, unrevoked API key (`authorization: Bearer dsk_…`).
 * - admin:   DOCSERVICE_ADMIN_TOKEN as a Bearer token.
 * - gateway: only the gateway's own identity (its client certificate, or the
 *            internal token when gRPC runs without TLS). The gateway may call
 *            every method: it has admitted its own caller by this table first.
 */
export type Access = "public" | "apiKey" | "admin" | "gateway";

/** By service (full protobuf name), then method (protobuf name). */
export const RPC_ACCESS: Record<string, Record<string, Access>> = {
  "docservice.v1.KeyService": {
    Register: "public",
    Verify: "public",
    // The key in the message is the credential.
    GetKeyInfo: "public",
    // An oracle for valid keys: only for the gateway (and backends) checking their callers.
    Authenticate: "gateway",
    // Any key or every key of an address; a holder revokes their own key with DELETE /v1/auth/key.
    Revoke: "admin",
  },
  "docservice.v1.SigningService": {
    Sign: "apiKey",
    Verify: "apiKey",
    Timestamp: "apiKey",
    GetVerificationKey: "public",
  },
  "docservice.v1.ConversionService": {
    Convert: "apiKey",
  },
  "docservice.v1.AnnotationService": {
    Annotate: "apiKey",
  },
  "docservice.v1.TelemetryService": {
    // The license key in the message is checked by the service itself.
    Collect: "public",
    GetUsage: "admin",
    AddLicenseKey: "admin",
    RemoveLicenseKey: "admin",
    ListLicenseKeys: "admin",
  },
};

/** By "METHOD /path". */
export const ROUTE_ACCESS: Record<string, Access> = {
  "GET /v1/health": "public",
  "GET /v1/auth/register": "public",
  "GET /v1/auth/verify": "public",
  "GET /v1/auth/key": "apiKey",
  "DELETE /v1/auth/key": "apiKey",
  "POST /v1/convert": "apiKey",
  "POST /v1/annotate": "apiKey",
  "POST /v1/sign": "apiKey",
  "POST /v1/verify": "apiKey",
  "POST /v1/timestamp": "apiKey",
  "GET /v1/verify/key": "public",
  "POST /v1/collect": "public",
  "GET /v1/usage": "admin",
  "POST /v1/admin/license-keys": "admin",
  "GET /v1/admin/license-keys": "admin",
  "DELETE /v1/admin/license-keys": "admin",
};

/** The rule of an RPC; a method without one is refused to everyone but the gateway. */
export function rpcAccess(service: string, method: string): Access {
  return RPC_ACCESS[service]?.[method] ?? "gateway";
}

/** The rule of a /v1 route; a route without one is refused (the rules test keeps that from happening). */
export function routeAccess(route: { method: string; path: string }): Access {
  return ROUTE_ACCESS[`${route.method} ${route.path}`] ?? "gateway";
}
