// Bodies answered before they were read (over their limit, refused, unauthenticated) against a live gateway, from raw
// sockets that go on sending whatever comes back: the answer goes out at once, and the server reads at most
// UNREAD_BODY_MAX_BYTES more and closes within UNREAD_BODY_MAX_MS. Each connection's bytes are counted on the
// server's side of it (the "http.server.request.start" diagnostics channel hands over its socket).
import assert from "node:assert/strict";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { credentialCheck } from "../access/admit.js";
import { loadConfig } from "../configuration.js";
import { ServiceError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { MessageLimits } from "../core/message-limits.js";
import { keysModule } from "../keys/module.js";
import { MODULES } from "../modules.js";
import { flood, type Flooded } from "../../test/support/raw-socket.js";
import { startGateway, type RunningGateway } from "./gateway.js";
import { UNREAD_BODY_MAX_BYTES, UNREAD_BODY_MAX_MS } from "./unread-body.js";

const API_KEY = "dsk_unread_body";
const KB = 1024;
/** What the server may read past the bound: Node's socket reads (64 KB) and the request's buffer (64 KB) as reading stops, and the framing of chunks. */
const SLACK_BYTES = 384 * KB;
/** How late the answer may be, and the close after the bound, on a busy machine. */
const LATE_MS = 1500;

/** A backend whose every method answers 503: the routes' own reading and checks still run. */
const backendUnavailable = (name: string) => new Proxy({}, { get: () => () => Promise.reject(new ServiceError("UNAVAILABLE", `no ${name} in this test`)) });

describe("a body answered before it was read: answered at once, a bounded rest read, the connection closed", () => {
  let gateway: RunningGateway;
  const serverSockets = new Map<string, Socket>();
  const onRequest = (message: unknown) => {
    const { request, socket } = message as { request: IncomingMessage; socket: Socket };
    const id = request.headers["x-request-id"];
    if (typeof id === "string") serverSockets.set(id, socket);
  };

  before(async () => {
    subscribe("http.server.request.start", onRequest);
    // a sign body's limit: the document as base64 + 6 × the metadata limit + 4 MB (4,200,000 bytes or so)
    const config = loadConfig({ DOCSERVICE_DATA_DIR: "/nonexistent", SIGNING_MAX_BYTES: "1024", SIGNING_METADATA_MAX_BYTES: "256" });
    const messages = MessageLimits.of(config);
    const keys = {
      authenticate: async ({ apiKey }: { apiKey: string }) => {
        if (apiKey !== API_KEY) throw new ServiceError("UNAUTHENTICATED", "The API key is malformed or revoked.");
        return { principal: { keyId: "0".repeat(64), email: "ada@example.test", displayPrefix: API_KEY.slice(0, 10), createdAt: new Date() } };
      },
    };
    gateway = await startGateway({
      settings: { ...config, host: "127.0.0.1", port: 0, shutdownTimeoutMs: 1000, memoryBudgetMb: 8 },
      logger: createLogger("silent"),
      credentials: credentialCheck(undefined, keys),
      routes: MODULES.flatMap((module) => module.routes?.(backendUnavailable(module.name), config, messages) ?? []),
      backends: {},
      bridges: [{ ...keysModule.service!, api: backendUnavailable("keys") }],
      messages,
    });
  });

  after(async () => {
    unsubscribe("http.server.request.start", onRequest);
    await gateway?.close();
  });

  let requests = 0;

  /** {@link flood} with an X-Request-Id, and what the server read off that connection, counted on its side. */
  async function sent(head: string, options: Parameters<typeof flood>[2] = {}): Promise<Flooded & { serverRead: number }> {
    const id = `unread-body-${++requests}`;
    const flooded = await flood(gateway.port, `${head}\r\nX-Request-Id: ${id}\r\n\r\n`, options);
    const serverRead = serverSockets.get(id)?.bytesRead ?? NaN;
    serverSockets.delete(id);
    return { ...flooded, serverRead };
  }

  /** The answer came at once, the server read at most `readBefore` (the headers and what the route read) plus the bound, and closed within the bound. */
  function assertBounded(what: string, flooded: Flooded & { serverRead: number }, readBefore: number): void {
    assert.ok(flooded.answerMs >= 0 && flooded.answerMs < LATE_MS, `${what}: answered after ${Math.round(flooded.answerMs)} ms`);
    assert.equal(flooded.headers.connection, "close", `${what}: the answer says the connection closes`);
    assert.ok(!flooded.gaveUp && flooded.ms < flooded.answerMs + UNREAD_BODY_MAX_MS + LATE_MS, `${what}: closed after ${Math.round(flooded.ms)} ms`);
    const past = flooded.serverRead - readBefore;
    assert.ok(past <= UNREAD_BODY_MAX_BYTES + SLACK_BYTES, `${what}: the server read ${flooded.serverRead} bytes, ${past} past what it needed`);
  }

  test("an endless chunked body to /v1/collect (64 KB): 413 at once, then at most the bound read and the connection closed", async () => {
    const flooded = await sent("POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked", { chunked: true });
    assert.equal(flooded.status, 413, flooded.body);
    assert.equal(JSON.parse(flooded.body).code, "PAYLOAD_TOO_LARGE");
    assertBounded("collect", flooded, 64 * KB);
  });

  test("/v1/sign without credentials and Content-Length: 40000000000, or chunked: 401 at once, the rest not read", async () => {
    for (const framing of ["Content-Length: 40000000000", "Transfer-Encoding: chunked"]) {
      const flooded = await sent(`POST /v1/sign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}`, { chunked: framing.includes("chunked") });
      assert.equal(flooded.status, 401, `${framing}: ${flooded.body}`);
      assert.equal(JSON.parse(flooded.body).code, "UNAUTHENTICATED");
      assertBounded(framing, flooded, 0);
    }
  });

  test("a chunked /v1/sign with a key past its limit, never terminated: 413 (not 408) once past the limit", async () => {
    const limit = MessageLimits.of(loadConfig({ SIGNING_MAX_BYTES: "1024", SIGNING_METADATA_MAX_BYTES: "256" })).route("POST", "/v1/sign");
    const flooded = await sent(`POST /v1/sign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${API_KEY}\r\nTransfer-Encoding: chunked`, { chunked: true });
    assert.equal(flooded.status, 413, flooded.body);
    assert.match(JSON.parse(flooded.body).message, new RegExp(`larger than ${limit} bytes`));
    assertBounded("sign", flooded, limit);
  });

  test("a Content-Length over the limit with a key: 413 before any of it is read, the same bound", async () => {
    const flooded = await sent(`POST /v1/sign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Length: 40000000000`);
    assert.equal(flooded.status, 413, flooded.body);
    assertBounded("sign, declared", flooded, 0);
  });

  test("Connect past a method's limit: resource_exhausted at once, the connection closed within the bound", async () => {
    const flooded = await sent("POST /docservice.v1.KeyService/Register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked", { chunked: true });
    assert.equal(JSON.parse(flooded.body).code, "resource_exhausted", flooded.body);
    assert.ok(flooded.answerMs >= 0 && flooded.answerMs < LATE_MS, `answered after ${Math.round(flooded.answerMs)} ms`);
    assert.ok(!flooded.gaveUp && flooded.ms < flooded.answerMs + UNREAD_BODY_MAX_MS + LATE_MS, `closed after ${Math.round(flooded.ms)} ms`);
    assert.ok(flooded.serverRead <= 8 * KB + UNREAD_BODY_MAX_BYTES + SLACK_BYTES, `the server read ${flooded.serverRead} bytes`);
  });

  test("refused by the memory budget: 503 at once, not once the body has arrived", async () => {
    // a sign body still coming holds its route's limit (4 MB, four times over) of the 8 MB budget
    const holder = connect({ port: gateway.port, host: "127.0.0.1" });
    holder.on("error", () => {});
    holder.write(`POST /v1/sign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${API_KEY}\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const flooded = await sent("POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40000000000");
      assert.equal(flooded.status, 503, flooded.body);
      assert.equal(flooded.headers["retry-after"], "2");
      assertBounded("memory budget", flooded, 0);
    } finally {
      holder.destroy();
    }
  });

  test("a client that reads its answer only once it has sent its whole body gets it, and a clean close, when the rest is within the bound", async () => {
    // past the limit at once; the rest, within the bound, once the answer is out
    const body = [128 * KB, UNREAD_BODY_MAX_BYTES - 256 * KB];
    const flooded = await sent(`POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body[0] + body[1]}`, { parts: body });
    assert.equal(flooded.status, 413, flooded.body);
    assert.equal(JSON.parse(flooded.body).code, "PAYLOAD_TOO_LARGE");
    assert.equal(flooded.reset, false, "the connection was reset, not closed");
    assert.ok(!flooded.gaveUp && flooded.ms < 100 + LATE_MS, `closed after ${Math.round(flooded.ms)} ms: the body's end should close it`);
  });

  test("an answer given before its body arrived says Connection: close, Connect's too, so no client sends its next request on that connection", async () => {
    const socket = connect(gateway.port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    const closed = new Promise((resolve) => socket.once("close", resolve));
    try {
      // a method the outside may not call is answered from its headers alone
      socket.write("POST /docservice.v1.KeyService/Authenticate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n");
      for (const end = Date.now() + 5000; !/\r\n\r\n/.test(received) && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.match(received, /^HTTP\/1\.1 [45]\d\d [\s\S]*\r\nConnection: close\r\n/i);
      socket.end("{}");
      await closed;
    } finally {
      socket.destroy();
    }
  });

  test("a body within its limit leaves the connection open for the next request", async () => {
    const flooded = await sent("POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2", { parts: [2], giveUpMs: 1000 });
    // no license key is a 400 (or 401); either way an answer on a connection kept alive
    assert.ok(flooded.status >= 400 && flooded.status < 500, flooded.body);
    assert.notEqual(flooded.headers.connection, "close");
    assert.ok(flooded.gaveUp, "the server closed a connection whose body it had read whole");
  });
});
