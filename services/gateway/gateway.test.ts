import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MessageLimits } from "../core/message-limits.js";
import { loadConfig } from "../configuration.js";
import { DataDir } from "../core/data-dir.js";
import { ServiceError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import type { KeyServiceApi } from "../keys/key-service.js";
import { provisionKeyService, type ProvisionedKeyService } from "../keys/provision.js";
import { keysModule } from "../keys/module.js";
import { MODULES } from "../modules.js";
import { credentialCheck } from "../access/admit.js";
import { startGateway } from "./gateway.js";

/** A backend whose every method answers 503: the route's own validation still runs. */
const backendUnavailable = (name: string) => new Proxy({}, { get: () => () => Promise.reject(new ServiceError("UNAVAILABLE", `no ${name} in this test`)) });

describe("gateway", () => {
  let dataDir: string;
  let provisioned: ProvisionedKeyService;
  let keys: KeyServiceApi;
  let registerDelayMs = 0;

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), "docservice-gateway-"));
    provisioned = provisionKeyService(loadConfig({ DOCSERVICE_DATA_DIR: dataDir }), new DataDir(dataDir), createLogger("silent"));
    const service = provisioned.service;
    // The real service, with a pause in register to hold a request in flight.
    keys = Object.assign(Object.create(service), {
      register: async (request: Parameters<KeyServiceApi["register"]>[0]) => {
        await sleep(registerDelayMs);
        return service.register(request);
      },
    });
  });

  after(async () => {
    await provisioned.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = (shutdownTimeoutMs = 5000) => {
    const config = loadConfig({
      DOCSERVICE_DATA_DIR: dataDir,
      CONVERSION_MAX_BYTES: "1024",
      SIGNING_MAX_BYTES: "1024",
      SIGNING_METADATA_MAX_BYTES: "256",
    });
    const messages = MessageLimits.of(config);
    // The other modules have their own tests against their real backends; here only their routes' validation runs.
    const routes = MODULES.flatMap((module) => module.routes?.(module === keysModule ? keys : backendUnavailable(module.name), config, messages) ?? []);
    return startGateway({
      settings: { ...config, host: "127.0.0.1", port: 0, shutdownTimeoutMs },
      logger: createLogger("silent"),
      credentials: credentialCheck(config.adminToken, keys),
      routes,
      backends: { keys: () => provisioned.service.health() },
      bridges: [{ ...keysModule.service!, api: keys }],
      messages,
    });
  };

  test("/openapi.json documents exactly the routes served, with every status they answer", async () => {
    const gateway = await start();
    const base = `http://127.0.0.1:${gateway.port}`;
    try {
      const document: any = await (await fetch(`${base}/openapi.json`)).json();
      assert.equal(document.openapi, "3.1.0");
      const documented = Object.entries(document.paths as Record<string, object>).flatMap(([path, ops]) =>
        Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
      );
      assert.deepEqual(documented.sort(), gateway.routes.map((r) => `${r.method} ${r.path}`).sort());
      assert.ok(documented.includes("GET /v1/auth/register") && documented.includes("GET /v1/health"));

      // Each route, called with and without what it needs, answers only statuses its document lists.
      const probes: Array<[string, string, Record<string, string>]> = [
        ["GET", "/v1/health", {}],
        ["GET", "/v1/auth/register?email=x", {}],
        ["GET", "/v1/auth/register?email=doc@example.test", {}],
        ["GET", "/v1/auth/verify?email=doc@example.test&code=000000", {}],
        ["GET", "/v1/auth/verify", {}],
        ["GET", "/v1/auth/key", {}],
        ["GET", "/v1/auth/key", { Authorization: "Bearer dsk_wrong" }],
        ["DELETE", "/v1/auth/key", {}],
        ["POST", "/v1/convert?from=docx", {}],
        ["POST", "/v1/sign", {}],
        ["POST", "/v1/verify", {}],
        ["POST", "/v1/verify", { "Content-Type": "application/json" }],
        ["GET", "/v1/verify/key", {}],
      ];
      for (const [method, target, headers] of probes) {
        const response = await fetch(`${base}${target}`, { method, headers });
        const path = target.split("?")[0];
        const operation = document.paths[path][method.toLowerCase()];
        assert.ok(operation.responses[response.status], `${method} ${target} answered ${response.status}, not documented`);
        const body: any = await response.json();
        if (response.status >= 400) {
          for (const field of document.components.schemas.Error.required) assert.ok(field in body, `${field} missing in ${JSON.stringify(body)}`);
        }
      }
    } finally {
      await gateway.close();
    }
  });

  test("a repeated single-valued query parameter is 400 naming it, and nothing is sent; every error body has details", async () => {
    const gateway = await start();
    const base = `http://127.0.0.1:${gateway.port}`;
    const outbox = join(dataDir, "outbox");
    const mails = () => (existsSync(outbox) ? readdirSync(outbox).length : 0);
    try {
      const before = mails();
      const repeated = await fetch(`${base}/v1/auth/register?email=a@example.test&email=b@example.test`);
      assert.equal(repeated.status, 400);
      const body: any = await repeated.json();
      assert.equal(body.code, "VALIDATION_ERROR");
      assert.deepEqual(body.details, [{ field: "email", issue: "must be given once, not 2 times" }]);
      assert.equal(mails(), before, "no code was e-mailed to either address");

      const verify: any = await (await fetch(`${base}/v1/auth/verify?email=a@example.test&code=1&code=2`)).json();
      assert.deepEqual(verify.details, [{ field: "code", issue: "must be given once, not 2 times" }]);

      // an error that is not about a field still has the one documented shape, with an empty list
      const missingKey = await fetch(`${base}/v1/auth/key`);
      assert.equal(missingKey.status, 401);
      const unauthenticated: any = await missingKey.json();
      assert.deepEqual(Object.keys(unauthenticated).sort(), ["code", "details", "error", "message", "requestId"]);
      assert.deepEqual(unauthenticated.details, []);
      assert.deepEqual(((await (await fetch(`${base}/v1/nowhere`)).json()) as any).details, []);
    } finally {
      await gateway.close();
    }
  });

  test("JSON bodies: over the limit by Content-Length or streamed → 413; not JSON → 400; wrong type → 415", async () => {
    const gateway = await start();
    const base = `http://127.0.0.1:${gateway.port}`;
    const post = (body: string | Buffer | ReadableStream, headers: Record<string, string> = { "Content-Type": "application/json" }) =>
      fetch(`${base}/v1/collect`, { method: "POST", headers, body, duplex: "half" } as RequestInit);
    try {
      const huge = Buffer.alloc(6 * 1024 * 1024, 0x20);
      const declared = await post(huge);
      assert.equal(declared.status, 413);
      assert.equal(((await declared.json()) as any).code, "PAYLOAD_TOO_LARGE");

      // chunked, no Content-Length: refused once past the limit, answered at once (the rest is not read: unread-body.test.ts)
      let sent = 0;
      const streamed = await post(
        new ReadableStream({
          pull(controller) {
            if (sent >= huge.length) return controller.close();
            controller.enqueue(huge.subarray(sent, sent + 256 * 1024));
            sent += 256 * 1024;
          },
        }),
      );
      assert.equal(streamed.status, 413);

      const notJson = await post("{oops");
      assert.equal(notJson.status, 400);
      assert.deepEqual(((await notJson.json()) as any).details, [{ field: "body", issue: "is not valid JSON" }]);
      assert.equal((await post("{}", { "Content-Type": "text/plain" })).status, 415);
    } finally {
      await gateway.close();
    }
  });

  test("SIGTERM-style close finishes in-flight requests and refuses new connections", async () => {
    const gateway = await start();
    const base = `http://127.0.0.1:${gateway.port}`;
    registerDelayMs = 300;
    try {
      const inFlight = fetch(`${base}/v1/auth/register?email=slow@example.test`);
      await sleep(50);
      const closed = gateway.close();
      await sleep(20);
      await assert.rejects(fetch(`${base}/v1/health`), "a new connection is refused while closing");
      const response = await inFlight;
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { expiresInSeconds: number }).expiresInSeconds, 900);
      await closed;
    } finally {
      registerDelayMs = 0;
    }
  });

  test("draining: /v1/health answers 503 stopping, requests are still served and each answer closes its connection; a request in flight finishes", async () => {
    const gateway = await start();
    const base = `http://127.0.0.1:${gateway.port}`;
    registerDelayMs = 300;
    try {
      const before = await fetch(`${base}/v1/health`);
      assert.equal(before.status, 200);
      assert.notEqual(before.headers.get("connection"), "close");
      const inFlight = fetch(`${base}/v1/auth/register?email=draining@example.test`);
      await sleep(50);
      gateway.drain();
      const health = await fetch(`${base}/v1/health`);
      assert.equal(health.status, 503);
      assert.equal(health.headers.get("retry-after"), "5");
      assert.equal(health.headers.get("connection"), "close");
      assert.equal(((await health.json()) as { status: string }).status, "stopping");
      registerDelayMs = 0;
      const served = await fetch(`${base}/v1/auth/register?email=after-drain@example.test`);
      assert.equal(served.status, 200, "a new request is still served while draining");
      assert.equal(served.headers.get("connection"), "close");
      assert.equal((await inFlight).status, 200);
      await gateway.close();
    } finally {
      registerDelayMs = 0;
    }
  });

  test("/readyz and /livez are the pod's own state: ready with a backend down, /readyz 503 once draining while /livez stays 200", async () => {
    const config = loadConfig({ DOCSERVICE_DATA_DIR: dataDir });
    const gateway = await startGateway({
      settings: { ...config, host: "127.0.0.1", port: 0 },
      logger: createLogger("silent"),
      credentials: credentialCheck(undefined, keys),
      routes: [],
      backends: { signing: () => Promise.reject(new Error("signing is rolling")) },
      bridges: [],
      messages: MessageLimits.of(config),
    });
    const base = `http://127.0.0.1:${gateway.port}`;
    const probe = async (path: string, method = "GET") => {
      const answer = await fetch(`${base}${path}`, { method });
      return `${answer.status} ${(await answer.text()).trim()}`;
    };
    try {
      assert.equal((await fetch(`${base}/v1/health`)).status, 503, "/v1/health reports the backend down");
      assert.equal(await probe("/readyz"), "200 ok", "a backend down is no reason to leave the Service");
      assert.equal(await probe("/livez"), "200 ok");
      assert.match(await probe("/readyz", "POST"), /^404 /, "the probes answer GET only");
      gateway.drain();
      assert.equal(await probe("/readyz"), "503 stopping");
      assert.equal(await probe("/livez"), "200 ok", "leaving is no reason to be restarted");
    } finally {
      await gateway.close();
    }
  });

  test("close gives up on requests slower than the shutdown timeout", async () => {
    const gateway = await start(100);
    registerDelayMs = 2000;
    try {
      const inFlight = fetch(`http://127.0.0.1:${gateway.port}/v1/auth/register?email=stuck@example.test`).then(
        () => "answered",
        () => "cut",
      );
      await sleep(50);
      const started = Date.now();
      await gateway.close();
      assert.ok(Date.now() - started < 1000, "close waited for the slow request");
      assert.equal(await inFlight, "cut");
    } finally {
      registerDelayMs = 0;
    }
  });
});
