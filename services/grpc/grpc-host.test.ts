import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
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
import { GRPC_CONNECTIONS_PER_BACKEND } from "./grpc-limits.js";
import { hostedUnary, startGrpcHost } from "./grpc-host.js";
import { waitFor } from "../../test/support/wait.js";

// A stopping gRPC host: calls in flight finish within the shutdown timeout, and are cut past it; a client spreads its calls over the hosts its target names.
describe("gRPC host shutdown, and clients over several hosts", () => {
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

  /** A host of the key service; its register calls wait `registerDelayMs`, and until `held` (when given) settles. */
  async function start(shutdownTimeoutMs: number, held?: Promise<void>) {
    const service = provisioned.service;
    const served = { registrations: 0 };
    // the real service, with a pause in register to hold a call in flight
    const keys: KeyServiceApi = Object.assign(Object.create(service), {
      register: async (request: Parameters<KeyServiceApi["register"]>[0]) => {
        served.registrations++;
        await sleep(registerDelayMs);
        await held;
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
    return { host, remote, served };
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
      remote.close();
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
      remote.close();
    }
  });

  /** A TCP proxy on loopback, as kube-proxy is in front of a Service's pods: `route` decides where each connection goes. */
  async function startProxy(route: (socket: Socket) => void) {
    const proxy = createServer(route);
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  function pipeTo(socket: Socket, port: number): void {
    const upstream = connect(port, "127.0.0.1");
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  }

  test("a client spreads its calls over several connections, each of which a Service's proxy may send to another pod", async () => {
    const [first, second] = [await start(5000), await start(5000)];
    // as kube-proxy does behind a ClusterIP: each new connection to one address goes to one of the pods, here in turn
    let connections = 0;
    const proxy = await startProxy((socket) => pipeTo(socket, (connections++ % 2 === 0 ? first : second).host.port));
    const remote = remoteApi(KeyServiceService, { serviceName: "Key service", address: `127.0.0.1:${(proxy.address() as AddressInfo).port}`, timeoutMs: 10_000, transport });
    try {
      for (let i = 0; i < 20; i++) await remote.api.register({ email: `spread-${i}@example.test`, clientIp: `198.51.100.${i + 1}` });
      // one connection would have put all 20 on one host
      const served = [first.served.registrations, second.served.registrations];
      assert.equal(connections, GRPC_CONNECTIONS_PER_BACKEND);
      assert.ok(served[0]! + served[1]! === 20 && Math.min(...served) >= 5, `calls served by each host: ${served.join(", ")}`);
    } finally {
      for (const client of [remote, first.remote, second.remote]) client.close();
      await Promise.all([first.host.shutdown(), second.host.shutdown()]);
      proxy.close();
    }
  });

  test("a call goes over the connection with the fewest calls in flight: a host with a queue gets no more while another is idle", async () => {
    let release!: () => void;
    const [stuck, idle] = [await start(5000, new Promise<void>((resolve) => (release = resolve))), await start(5000)];
    // as kube-proxy does behind a ClusterIP: each new connection goes to one of the pods, here in turn
    let connections = 0;
    const proxy = await startProxy((socket) => pipeTo(socket, (connections++ % 2 === 0 ? stuck : idle).host.port));
    const remote = remoteApi(KeyServiceService, { serviceName: "Key service", address: `127.0.0.1:${(proxy.address() as AddressInfo).port}`, timeoutMs: 10_000, transport });
    const pending: Promise<unknown>[] = [];
    try {
      // the first call finds no connection up and asks every client to connect (it may stay on the stuck host)
      pending.push(remote.api.register({ email: "warm-least@example.test", clientIp: "198.51.100.201" }).catch(() => {}));
      await waitFor(async () => connections === GRPC_CONNECTIONS_PER_BACKEND, { what: "every client connecting", timeoutMs: 5000, intervalMs: 50 });
      await sleep(200);
      const before = [stuck.served.registrations, idle.served.registrations];
      // one call after another, each given 300 ms: those the idle host serves are answered, those on the stuck one stay in flight
      for (let i = 0; i < 24; i++) {
        const call = remote.api.register({ email: `least-${i}@example.test`, clientIp: `198.51.100.${i + 1}` });
        pending.push(call.catch(() => {}));
        await Promise.race([call, sleep(300)]);
      }
      // in turn, half the calls (12) would have queued on the stuck host; by the fewest in flight, at most one a connection to it
      const queued = stuck.served.registrations - before[0]!;
      assert.ok(queued <= GRPC_CONNECTIONS_PER_BACKEND / 2, `calls that went to the host with a queue: ${queued} of 24`);
      assert.equal(idle.served.registrations - before[1]!, 24 - queued, "the idle host served the rest");
    } finally {
      release();
      await Promise.all(pending);
      for (const client of [remote, stuck.remote, idle.remote]) client.close();
      await Promise.all([stuck.host.shutdown(), idle.host.shutdown()]);
      proxy.close();
    }
  });

  test("calls go over connections that are up, not one still being made (a Service sending it to a pod that has gone)", async () => {
    const { host, remote: direct } = await start(5000);
    // the first connection goes nowhere: accepted, never answered, as a connection to a vanished pod's address hangs
    const silent: Socket[] = [];
    let connections = 0;
    const proxy = await startProxy((socket) => (connections++ === 0 ? void silent.push(socket) : pipeTo(socket, host.port)));
    const remote = remoteApi(KeyServiceService, { serviceName: "Key service", address: `127.0.0.1:${(proxy.address() as AddressInfo).port}`, timeoutMs: 2000, transport });
    try {
      // the first call finds no connection up and may wait on the silent one; it asks every client to connect
      await remote.api.register({ email: "warm@example.test", clientIp: "198.51.100.200" }).catch(() => {});
      await waitFor(async () => connections === GRPC_CONNECTIONS_PER_BACKEND, { what: "every client connecting", timeoutMs: 5000, intervalMs: 50 });
      const outcomes = await Promise.all(
        Array.from({ length: 3 * GRPC_CONNECTIONS_PER_BACKEND }, (_, i) =>
          remote.api.register({ email: `up-${i}@example.test`, clientIp: `198.51.100.${i + 1}` }).then(() => "answered", (error: Error) => error.message),
        ),
      );
      assert.deepEqual(new Set(outcomes), new Set(["answered"]));
    } finally {
      for (const client of [remote, direct]) client.close();
      for (const socket of silent) socket.destroy();
      await host.shutdown();
      proxy.close();
    }
  });
});
