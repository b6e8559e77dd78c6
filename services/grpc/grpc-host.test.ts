import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { KeyServiceService } from "../../gen/ts-proto/docservice/v1/keys.js";
import { credentialCheck } from "../access/admit.js";
import { InternalTransport } from "../access/internal-transport.js";
import { loadConfig } from "../configuration.js";
import { DataDir } from "../core/data-dir.js";
import { createLogger } from "../core/logger.js";
import { MessageLimits } from "../core/message-limits.js";
import { provisionKeyService, type ProvisionedKeyService } from "../keys/provision.js";
import type { KeyServiceApi } from "../keys/key-service.js";
import { remoteApi } from "./grpc-client.js";
import { hostedUnary, startGrpcHost } from "./grpc-host.js";

// A stopping gRPC host: calls in flight finish within the shutdown timeout, and are cut past it.
describe("gRPC host shutdown", () => {
  let dataDir: string;
  let provisioned: ProvisionedKeyService;
  let registerDelayMs = 0;
  const transport = new InternalTransport({ gatewayNames: [], internalToken: "grpc-host-test-internal-token-0123456789" });

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), "docservice-grpc-host-"));
    provisioned = provisionKeyService(loadConfig({ DOCSERVICE_DATA_DIR: dataDir }), new DataDir(dataDir), createLogger("silent"));
  });

  after(async () => {
    await provisioned.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(shutdownTimeoutMs: number) {
    const service = provisioned.service;
    // the real service, with a pause in register to hold a call in flight
    const keys: KeyServiceApi = Object.assign(Object.create(service), {
      register: async (request: Parameters<KeyServiceApi["register"]>[0]) => {
        await sleep(registerDelayMs);
        return service.register(request);
      },
    });
    const config = loadConfig({ DOCSERVICE_DATA_DIR: dataDir });
    const host = await startGrpcHost(
      { host: "127.0.0.1", port: 0, transport, credentials: credentialCheck(undefined, keys), connections: config, messages: MessageLimits.of(config), shutdownTimeoutMs },
      [hostedUnary("docservice.v1.KeyService", KeyServiceService, keys, () => service.health())],
      createLogger("silent"),
    );
    const remote = remoteApi(KeyServiceService, { serviceName: "Key service", address: `127.0.0.1:${host.port}`, timeoutMs: 10_000, transport });
    return { host, remote };
  }

  test("a call in flight finishes; the host then takes no new call", async () => {
    const { host, remote } = await start(5000);
    try {
      registerDelayMs = 400;
      const inFlight = remote.api.register({ email: "inflight@example.test", clientIp: "127.0.0.1" });
      await sleep(100);
      const stopped = host.shutdown();
      assert.equal((await inFlight).expiresInSeconds, 900);
      await stopped;
      registerDelayMs = 0;
      await assert.rejects(remote.api.register({ email: "late@example.test", clientIp: "127.0.0.1" }));
    } finally {
      registerDelayMs = 0;
      remote.client.close();
    }
  });

  test("a call slower than the shutdown timeout is cut, and shutdown returns", async () => {
    const { host, remote } = await start(200);
    try {
      registerDelayMs = 3000;
      const inFlight = remote.api.register({ email: "stuck@example.test", clientIp: "127.0.0.1" }).then(
        () => "answered",
        () => "cut",
      );
      await sleep(100);
      const started = Date.now();
      await host.shutdown();
      assert.ok(Date.now() - started < 1500, `shutdown took ${Date.now() - started} ms`);
      assert.equal(await inFlight, "cut");
    } finally {
      registerDelayMs = 0;
      remote.client.close();
    }
  });
});
