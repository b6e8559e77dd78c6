import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ROUTE_ACCESS, RPC_ACCESS } from "../access/access-rules.js";
import { MessageLimits, ROUTE_CARRIES, RPC_CARRIES } from "./message-limits.js";

const limits = new MessageLimits({ signingBytes: 26_214_400, signingMetadataBytes: 16_384, conversionBytes: 26_214_400 });

describe("MessageLimits", () => {
  test("every RPC has a row, and every row is an RPC", () => {
    const rpcs = Object.entries(RPC_ACCESS).flatMap(([service, methods]) => Object.keys(methods).map((method) => `${service}/${method}`));
    assert.deepEqual(Object.keys(RPC_CARRIES).sort(), rpcs.sort());
  });

  test("every body-taking /v1 route has a row, and every row is a route", () => {
    const bodyRoutes = Object.keys(ROUTE_ACCESS).filter((route) => route.startsWith("POST "));
    assert.deepEqual(Object.keys(ROUTE_CARRIES).sort(), bodyRoutes.sort());
  });

  test("a document's methods get the document as base64 and their overhead; the others a few KB (the figures of docs/operations/security.md)", () => {
    assert.equal(limits.rpc("docservice.v1.SigningService", "Sign"), 39_245_144);
    assert.equal(limits.route("POST", "/v1/sign"), 39_245_144);
    assert.equal(limits.rpc("docservice.v1.AnnotationService", "Annotate"), 68_506_968);
    assert.equal(limits.route("POST", "/v1/convert"), 26_279_936);
    assert.equal(limits.rpc("docservice.v1.TelemetryService", "Collect"), 65_536);
    assert.equal(limits.rpc("docservice.v1.KeyService", "GetKeyInfo"), 8192);
    assert.equal(limits.rpc("docservice.v1.NoSuchService", "Anything"), 8192);
    assert.equal(limits.route("GET", "/v1/health"), 0);
    assert.equal(limits.largestRpc, 68_506_968);
  });

  test("only a document's methods may come compressed", () => {
    assert.equal(limits.rpcMayBeCompressed("docservice.v1.SigningService", "Sign"), true);
    assert.equal(limits.rpcMayBeCompressed("docservice.v1.KeyService", "GetKeyInfo"), false);
    assert.equal(limits.rpcMayBeCompressed("docservice.v1.TelemetryService", "Collect"), false);
  });
});
