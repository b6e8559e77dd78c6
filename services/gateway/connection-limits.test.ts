import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { applyConnectionLimits } from "./connection-limits.js";

const LIMITS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, minBodyBytesPerSecond: 1, maxConnections: 20, maxConnectionsPerClient: 1000 };

/** A gateway-like server: /hold answers once `release` is called, anything else at once. */
async function server() {
  const held: ServerResponse[] = [];
  const http = createServer((request, response) => {
    const done = limits.serving(request, response, "r");
    response.once("close", done);
    if (request.url === "/hold") held.push(response);
    else response.end("ok");
  });
  const limits = applyConnectionLimits(http, LIMITS, () => {});
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  const port = (http.address() as AddressInfo).port;
  return { http, port, release: () => held.splice(0).forEach((response) => response.end("held")) };
}

async function open(port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.on("error", () => {});
  return socket;
}

/** Sends a GET on a connection and resolves with what came back before it closed or the first answer ended. */
function get(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve) => {
    let received = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString();
      if (/\r\n\r\n(ok|held)$/.test(received)) resolve(received);
    });
    socket.once("close", () => resolve(received));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

const closed = (socket: Socket) => socket.destroyed || socket.readyState === "closed";

test("at the cap, a new connection takes the place of the oldest one that serves no request; idle connections cannot lock others out", async () => {
  const { http, port } = await server();
  try {
    const silent = [];
    for (let i = 0; i < LIMITS.maxConnections; i++) silent.push(await open(port));
    const closedFirst = once(silent[0], "close");
    const newcomer = await open(port);
    assert.match(await get(newcomer, "/"), /^HTTP\/1\.1 200 OK[\s\S]*ok$/);
    await closedFirst;
    assert.ok(closed(silent[0]), "the oldest silent connection made room");
    await sleep(50);
    assert.deepEqual(silent.slice(1).map(closed), Array(LIMITS.maxConnections - 1).fill(false), "the others stay");
    for (const socket of [...silent, newcomer]) socket.destroy();
  } finally {
    http.closeAllConnections();
    http.close();
  }
});

test("at the cap with every connection serving a request, a new one is closed, and the requests in flight are answered", async () => {
  const { http, port, release } = await server();
  try {
    const busy = [];
    for (let i = 0; i < LIMITS.maxConnections; i++) busy.push(await open(port));
    const answers = busy.map((socket) => get(socket, "/hold"));
    await sleep(200);
    const refused = await open(port);
    assert.equal(await get(refused, "/"), "", "closed without an answer");
    release();
    for (const answer of await Promise.all(answers)) assert.match(answer, /held$/);
    for (const socket of busy) socket.destroy();
  } finally {
    http.closeAllConnections();
    http.close();
  }
});
