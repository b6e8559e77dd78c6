import assert from "node:assert/strict";
import { test } from "node:test";
import { AnnotationService } from "../../gen/es/docservice/v1/annotation_pb.js";
import { ConversionService } from "../../gen/es/docservice/v1/conversion_pb.js";
import { KeyService } from "../../gen/es/docservice/v1/keys_pb.js";
import { SigningService } from "../../gen/es/docservice/v1/signing_pb.js";
import { TelemetryService } from "../../gen/es/docservice/v1/telemetry_pb.js";
import { keyRoutes } from "../keys/key-routes.js";
import { annotateRoute } from "../annotation/annotate-route.js";
import { convertRoute } from "../conversion/convert-route.js";
import { healthRoute } from "../gateway/health-route.js";
import { signRoutes } from "../signing/sign-routes.js";
import { telemetryRoutes } from "../telemetry/telemetry-routes.js";
import { ROUTE_ACCESS, RPC_ACCESS, routeAccess, rpcAccess } from "./access-rules.js";

const unused = new Proxy({}, { get: () => () => Promise.reject(new Error("not called")) }) as never;

test("every RPC of every service in proto/ has exactly one rule, and the table names no other", () => {
  const methods = [KeyService, SigningService, ConversionService, AnnotationService, TelemetryService].flatMap((service) => service.methods.map((m) => `${service.typeName}/${m.name}`));
  const ruled = Object.entries(RPC_ACCESS).flatMap(([service, rules]) => Object.keys(rules).map((method) => `${service}/${method}`));
  assert.deepEqual(ruled.sort(), methods.sort());
});

test("every /v1 route has exactly one rule, and the table names no other", () => {
  const routes = [
    healthRoute({}, Date.now()),
    ...keyRoutes(unused),
    convertRoute(unused, 1, 1),
    annotateRoute(unused, 1),
    ...signRoutes(unused, { maxDocumentBytes: 1, metadataMaxBytes: 1, maxBodyBytes: 1 }),
    ...telemetryRoutes(unused, { collectBodyBytes: 1, licenseKeyBodyBytes: 1 }),
  ];
  assert.deepEqual(routes.map((r) => `${r.method} ${r.path}`).sort(), Object.keys(ROUTE_ACCESS).sort());
});

test("the same capability has the same rule on /v1 and over gRPC", () => {
  const pairs: Array<[string, string, string]> = [
    ["POST /v1/sign", "docservice.v1.SigningService", "Sign"],
    ["POST /v1/verify", "docservice.v1.SigningService", "Verify"],
    ["POST /v1/timestamp", "docservice.v1.SigningService", "Timestamp"],
    ["GET /v1/verify/key", "docservice.v1.SigningService", "GetVerificationKey"],
    ["POST /v1/convert", "docservice.v1.ConversionService", "Convert"],
    ["POST /v1/annotate", "docservice.v1.AnnotationService", "Annotate"],
    ["POST /v1/collect", "docservice.v1.TelemetryService", "Collect"],
    ["GET /v1/usage", "docservice.v1.TelemetryService", "GetUsage"],
    ["POST /v1/admin/license-keys", "docservice.v1.TelemetryService", "AddLicenseKey"],
    ["GET /v1/auth/register", "docservice.v1.KeyService", "Register"],
  ];
  for (const [route, service, method] of pairs) {
    const [verb, path] = route.split(" ");
    assert.equal(routeAccess({ method: verb, path }), rpcAccess(service, method), route);
  }
});

test("anything without a rule is refused to all but the gateway", () => {
  assert.equal(rpcAccess("docservice.v1.SigningService", "SignEverything"), "gateway");
  assert.equal(routeAccess({ method: "PUT", path: "/v1/sign" }), "gateway");
});
