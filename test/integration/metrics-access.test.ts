// Who may read /metrics, on the gateway's port and on a backend's metrics
// listener (METRICS_PORT): with METRICS_TOKEN, only a caller that sends it;
// without, only this machine. And what the metrics listener holds at most.
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { networkInterfaces } from "node:os";
import { after, before, describe, test } from "node:test";
import { freePort } from "../support/ports.js";
import { answers, startService, type ServiceProcess } from "../support/service-process.js";

const TOKEN = "metrics-token-0123456789abcdef";

/** An address of this machine that is not loopback, so a request from it is not "this machine" to the listener; undefined on a host without one. */
const outerAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i?.family === "IPv4" && !i.internal)?.address;

async function get(url: string, authorization?: string): Promise<{ status: number; body: string; type: string }> {
  const response = await fetch(url, { headers: authorization ? { Authorization: authorization } : {} });
  return { status: response.status, body: await response.text(), type: response.headers.get("content-type") ?? "" };
}

function assertRefused(answer: { status: number; body: string }, status = 401, code = "UNAUTHENTICATED"): void {
  assert.equal(answer.status, status, answer.body);
  assert.equal(JSON.parse(answer.body).code, code, answer.body);
  assert.ok(!answer.body.includes(TOKEN), "the token never appears in an answer");
}

describe("/metrics on the gateway's port", () => {
  let open: ServiceProcess;
  let guarded: ServiceProcess;
  let openPort: number;
  let guardedPort: number;

  before(async () => {
    [openPort, guardedPort] = [await freePort(), await freePort()];
    // every interface, as in a container: what keeps others out is the rule, not the address bound
    [open, guarded] = await Promise.all([
      startService("all", { HOST: "0.0.0.0", PORT: String(openPort), CONVERSION_POOL_SIZE: "1" }, () => answers(`http://127.0.0.1:${openPort}/v1/health`)),
      startService("all", { HOST: "0.0.0.0", PORT: String(guardedPort), CONVERSION_POOL_SIZE: "1", METRICS_TOKEN: TOKEN }, () => answers(`http://127.0.0.1:${guardedPort}/v1/health`)),
    ]);
  });
  after(async () => Promise.all([open?.stop(), guarded?.stop()]));

  test("without METRICS_TOKEN, this machine reads it and another gets 401", { skip: outerAddress ? false : "no non-loopback address on this host" }, async () => {
    const local = await get(`http://127.0.0.1:${openPort}/metrics`);
    assert.equal(local.status, 200);
    assert.match(local.body, /^docservice_http_requests_total/m);
    const other = await get(`http://${outerAddress}:${openPort}/metrics`);
    assertRefused(other);
    assert.match(JSON.parse(other.body).message, /METRICS_TOKEN/);
  });

  test("with METRICS_TOKEN, only its bearer reads it, from this machine too", async () => {
    const base = `http://127.0.0.1:${guardedPort}/metrics`;
    assertRefused(await get(base));
    assertRefused(await get(base, "Bearer wrong-token-0123456789abcdef"));
    assertRefused(await get(base, `Basic ${TOKEN}`));
    const read = await get(base, `Bearer ${TOKEN}`);
    assert.equal(read.status, 200);
    assert.match(read.body, /^docservice_http_requests_total/m);
    assert.doesNotMatch(guarded.output(), new RegExp(TOKEN), "the token is never logged");
  });
});

describe("a backend's metrics listener (METRICS_PORT)", () => {
  let keys: ServiceProcess;
  let port: number;

  before(async () => {
    port = await freePort();
    keys = await startService("keys", { HOST: "127.0.0.1", GRPC_PORT: "0", METRICS_PORT: String(port), METRICS_TOKEN: TOKEN }, () => answers(`http://127.0.0.1:${port}/livez`));
  });
  after(async () => keys?.stop());

  test("/metrics asks for the token, /livez, /readyz and /health do not; anything else is the JSON error", async () => {
    const base = `http://127.0.0.1:${port}`;
    assertRefused(await get(`${base}/metrics`));
    const read = await get(`${base}/metrics`, `Bearer ${TOKEN}`);
    assert.equal(read.status, 200);
    assert.match(read.body, /^docservice_grpc_server_handled_total|^# HELP docservice_/m);
    assert.equal((await get(`${base}/livez`)).status, 200);
    assert.equal((await get(`${base}/health`)).status, 200);
    assert.equal((await get(`${base}/readyz`)).status, 200, "keys has no state of its own to wait for: ready once started");
    assertRefused(await get(`${base}/nothing-here`), 404, "NOT_FOUND");
    const posted = await fetch(`${base}/metrics`, { method: "POST", body: "x" });
    assertRefused({ status: posted.status, body: await posted.text() }, 405, "METHOD_NOT_ALLOWED");
  });

  test("it holds a bounded number of connections, and closes one that sends nothing", async () => {
    const sockets: Socket[] = [];
    const closed = new Set<Socket>();
    for (let i = 0; i < 40; i++) {
      const socket = connect(port, "127.0.0.1");
      socket.on("error", () => {});
      socket.on("close", () => closed.add(socket));
      sockets.push(socket);
    }
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.ok(closed.size >= 8, `beyond its 32 connections, the listener closes them: ${closed.size} of 40 closed`);
      const started = Date.now();
      while (closed.size < sockets.length && Date.now() - started < 15_000) await new Promise((resolve) => setTimeout(resolve, 250));
      assert.equal(closed.size, sockets.length, "a connection that sends no request is closed within the request timeout (10 s)");
      // and it still serves
      assert.equal((await get(`http://127.0.0.1:${port}/livez`)).status, 200);
    } finally {
      sockets.forEach((socket) => socket.destroy());
    }
  });
});
