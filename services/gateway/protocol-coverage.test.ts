// Every service in proto/ is some module's, and every method of it is reachable
// on every protocol the gateway serves: unary methods over Connect and gRPC-Web
// (unless the access rules keep them for the gateway), streaming ones over gRPC
// only, which Connect callers are told. A service or method added to a proto
// without being served fails here.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { credentialCheck } from "../access/admit.js";
import { rpcAccess } from "../access/access-rules.js";
import { loadConfig } from "../configuration.js";
import { ServiceError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { MessageLimits } from "../core/message-limits.js";
import { MODULES } from "../modules.js";
import { startGateway, type RunningGateway } from "./gateway.js";

const ADMIN_TOKEN = "protocol-coverage-admin-token";
const API_KEY = "dsk_protocol_coverage";
const GEN_DIR = new URL("../../gen/es/docservice/v1/", import.meta.url);

async function protoServices(): Promise<DescService[]> {
  const files = readdirSync(GEN_DIR).filter((name) => name.endsWith("_pb.ts"));
  const modules = await Promise.all(files.map((name) => import(new URL(name, GEN_DIR).href)));
  return modules.flatMap((exports) => Object.values(exports).filter((value): value is DescService => (value as { kind?: string })?.kind === "service"));
}

/** An API whose every method answers that it was reached, by name: proof the call got through routing and admission. */
const reachedApi = () => new Proxy({}, { get: (_, method) => () => Promise.reject(new ServiceError("CONFLICT", `reached ${String(method)}`)) });

describe("every RPC on every protocol", () => {
  let services: DescService[];
  let gateway: RunningGateway;
  let base: string;

  before(async () => {
    services = await protoServices();
    const config = loadConfig({ DOCSERVICE_DATA_DIR: "/nonexistent", DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN });
    // API keys as KeyService.Authenticate answers them: the principal of a known key, UNAUTHENTICATED for any other
    const keys = {
      authenticate: async ({ apiKey }: { apiKey: string }) => {
        if (apiKey !== API_KEY) throw new ServiceError("UNAUTHENTICATED", "The API key is malformed or revoked.");
        return { principal: { keyId: "k", email: "ada@example.test", displayPrefix: API_KEY.slice(0, 10), createdAt: new Date() } };
      },
    };
    gateway = await startGateway({
      settings: { ...config, host: "127.0.0.1", port: 0 },
      logger: createLogger("silent"),
      credentials: credentialCheck(ADMIN_TOKEN, keys),
      routes: [],
      backends: {},
      bridges: MODULES.flatMap((module) => (module.service ? [{ ...module.service, api: reachedApi() }] : [])),
      messages: MessageLimits.of(config),
    });
    base = `http://127.0.0.1:${gateway.port}`;
  });

  after(() => gateway?.close());

  test("the protos define the five services, and each is served by exactly one module", () => {
    const served = MODULES.flatMap((module) => (module.service ? [module.service.descriptor.typeName] : []));
    assert.ok(services.length >= 5, `found ${services.length} services`);
    assert.deepEqual(services.map((s) => s.typeName).sort(), [...served].sort());
  });

  const credentials = (service: string, method: string): Record<string, string> => {
    const access = rpcAccess(service, method);
    return access === "admin" ? { Authorization: `Bearer ${ADMIN_TOKEN}` } : access === "apiKey" ? { Authorization: `Bearer ${API_KEY}` } : {};
  };

  test("each unary method over Connect: reached, or not exposed when only the gateway may call it", async () => {
    let reached = 0;
    for (const service of services) {
      for (const method of service.methods.filter((m) => m.methodKind === "unary")) {
        const response = await fetch(`${base}/${service.typeName}/${method.name}`, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...credentials(service.typeName, method.name) },
          body: "{}",
        });
        const body: any = await response.json();
        const name = `${service.typeName}/${method.name}`;
        if (rpcAccess(service.typeName, method.name) === "gateway") {
          assert.equal(response.status, 404, name);
        } else {
          assert.equal(response.status, 409, `${name}: ${JSON.stringify(body)}`);
          assert.equal(body.message, `reached ${method.localName}`, name);
          reached++;
        }
      }
    }
    assert.ok(reached >= 14, `${reached} methods reached`);
  });

  test("each unary method over gRPC-Web: reached, or not exposed when only the gateway may call it", async () => {
    for (const service of services) {
      for (const method of service.methods.filter((m) => m.methodKind === "unary")) {
        const response = await fetch(`${base}/${service.typeName}/${method.name}`, {
          method: "POST",
          headers: { "Content-Type": "application/grpc-web+proto", "X-Grpc-Web": "1", ...credentials(service.typeName, method.name) },
          // one uncompressed, empty message
          body: new Uint8Array([0, 0, 0, 0, 0]),
        });
        const payload = Buffer.from(await response.arrayBuffer()).toString("latin1");
        const status = response.headers.get("grpc-status") ?? /grpc-status: ?(\d+)/.exec(payload)?.[1];
        const message = decodeURIComponent(response.headers.get("grpc-message") ?? /grpc-message: ?([^\r\n]*)/.exec(payload)?.[1] ?? "");
        const name = `${service.typeName}/${method.name}`;
        if (rpcAccess(service.typeName, method.name) === "gateway") {
          assert.equal(response.status, 404, name);
        } else {
          assert.equal(status, "6", `${name}: ALREADY_EXISTS from the API, got ${status} ${message}`);
          assert.equal(message, `reached ${method.localName}`, name);
        }
      }
    }
  });

  test("a streaming method is served over gRPC only, and a Connect caller is told so", async () => {
    const streaming = services.flatMap((service) => service.methods.filter((m) => m.methodKind !== "unary").map((m) => [service, m] as const));
    assert.deepEqual(streaming.map(([service, method]) => `${service.typeName}/${method.name}`), ["docservice.v1.ConversionService/Convert"]);
    for (const [service, method] of streaming) {
      const response = await fetch(`${base}/${service.typeName}/${method.name}`, { method: "POST", headers: { "Content-Type": "application/connect+json" }, body: "" });
      const body: any = await response.json();
      assert.equal(response.status, 404);
      assert.match(body.message, /served over gRPC only .*use its \/v1 route/);
    }
  });
});
