// What a fresh `npm start` exposes: /v1 on PORT, gRPC on loopback only; and a
// second instance beside it with only PORT and the data directory changed.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { freePort } from "../support/ports.js";
import { answers, startService, type ServiceProcess } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";

const listeningLine = (instance: ServiceProcess) => instance.output().split("\n").find((l) => l.includes("gRPC services listening"));

/** The gRPC port an instance logged it serves on (logs are flushed at least once a second). */
async function grpcPortOf(instance: ServiceProcess): Promise<number> {
  await waitFor(async () => listeningLine(instance) !== undefined, { what: "the gRPC listening line in the log", timeoutMs: 5000 });
  const logged = JSON.parse(listeningLine(instance)!) as { host: string; port: number };
  assert.equal(logged.host, "127.0.0.1");
  return logged.port;
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => (socket.destroy(), resolve(false)));
  });
}

describe("embedded defaults: two instances side by side, gRPC on loopback", () => {
  const instances: ServiceProcess[] = [];
  const dataDirs: string[] = [];

  before(async () => {
    for (let i = 0; i < 2; i++) {
      const dataDir = mkdtempSync(join(tmpdir(), `docservice-side-by-side-${i}-`));
      dataDirs.push(dataDir);
      const port = await freePort();
      // Nothing but PORT and the data directory: GRPC_PORT and GRPC_HOST keep their defaults, no internal token.
      instances.push(
        await startService("all", { PORT: String(port), DOCSERVICE_DATA_DIR: dataDir, CONVERSION_POOL_SIZE: "1", DOCSERVICE_INTERNAL_TOKEN: "" }, () => answers(`http://127.0.0.1:${port}/v1/health`)),
      );
    }
  });

  after(async () => {
    await Promise.all(instances.map((i) => i.stop()));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  test("both run, on different gRPC ports, the second saying why its port is not 50051", async () => {
    const ports = await Promise.all(instances.map(grpcPortOf));
    assert.notEqual(ports[0], ports[1]);
    const moved = instances.find((i) => i.output().includes("is taken by another process"));
    if (ports.includes(50051)) assert.ok(moved, `the instance that did not get 50051 says so:\n${instances.map((i) => i.output()).join("\n---\n")}`);
  });

  test("gRPC answers on loopback and not on the machine's other addresses", async () => {
    const port = await grpcPortOf(instances[0]);
    assert.equal(await reachable("127.0.0.1", port), true);
    const external = Object.values(networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal);
    if (!external) return assert.fail("this machine has no non-loopback IPv4 address to try");
    assert.equal(await reachable(external.address, port), false, `gRPC must not listen on ${external.address}`);
  });
});
