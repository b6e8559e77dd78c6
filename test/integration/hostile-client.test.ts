import assert from "node:assert/strict";
import { once } from "node:events";
import { readdirSync, readlinkSync } from "node:fs";
import { connect as http2Connect } from "node:http2";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { gzipSync } from "node:zlib";
import { loadConfig } from "../../services/configuration.js";
import { MessageLimits, RPC_CARRIES } from "../../services/core/message-limits.js";
import { bridgedMethods } from "../../services/gateway/connect-bridge.js";
import { UNREAD_BODY_MAX_MS } from "../../services/gateway/unread-body.js";
import { MAX_URL_CHARS } from "../../services/fetch/url-length.js";
import { MODULES } from "../../services/modules.js";
import { deepArray, deepJson, deepStructBinary, grpcEnvelope, rawGrpcCall, ResidentSampler, varint } from "../support/hostile-requests.js";
import { noisePdf } from "../support/noise-pdf.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { freePort } from "../support/ports.js";
import { flood, idleConnection, rawExchange, trickle, type RawResponse } from "../support/raw-socket.js";
import { signBody } from "../support/sign-requests.js";
import { startPlatform, type Platform } from "../support/platform.js";
import { waitFor } from "../support/wait.js";

/**
 * The platform tried as a hostile client would, against a live embedded
 * instance: what a schema-driven fuzzer never sends. Compression bombs, deep
 * nesting in every free-form field, oversized identifiers, headers and request
 * lines, malformed framing, slow headers and bodies, floods of idle
 * connections, bursts of large uploads and signs. Gates after every case: no
 * 500, every error the one JSON body, every 503 with Retry-After, /v1/health
 * still answering; the process's resident memory, sampled throughout, stays
 * under the memory budget plus a stated margin and ends within twice its size
 * after warm-up.
 */

const ADMIN_TOKEN = "hostile-admin-token-0123456789";
const MEMORY_BUDGET_MB = 256;
/** Beyond the budget: the process itself (V8 heaps, the worker threads, the native addons), as measured after warm-up, and what a request holds besides its body. */
const RESIDENT_MARGIN_MB = 640;
/** The production default of HTTP_HEADERS_TIMEOUT_MS. */
const HEADERS_TIMEOUT_MS = 10_000;
const PER_CLIENT_CONNECTIONS = 1000;
const GRPC_IDLE_MS = 2000;
const MB = 1024 * 1024;

let platform: Platform;
let grpcPort: number;
let port: number;
let memory: ResidentSampler;
let afterWarmUp: number;
/** The burst's 24 MB signing request (JSON). */
let largeSignBody: string;

interface Answer {
  status: number;
  headers: Headers | Record<string, string>;
  text: string;
}

const header = (answer: Answer, name: string) => (answer.headers instanceof Headers ? answer.headers.get(name) : answer.headers[name]) ?? undefined;

/** The gates every answer meets: no 5xx but a 503 with Retry-After (or a 501 for what is not configured), and an error is a JSON body with a code. */
function assertSound(what: string, answer: Answer): void {
  assert.ok(answer.status !== 0, `${what}: closed without an answer`);
  assert.ok(answer.status < 500 || answer.status === 503 || answer.status === 501, `${what}: answered ${answer.status} ${answer.text.slice(0, 300)}`);
  if (answer.status === 503) assert.ok(header(answer, "retry-after"), `${what}: 503 without Retry-After`);
  if (answer.status >= 400) {
    const body = JSON.parse(answer.text) as { code?: string };
    assert.ok(typeof body.code === "string" && body.code.length > 0, `${what}: error body without a code: ${answer.text.slice(0, 200)}`);
  }
}

async function send(path: string, init: RequestInit): Promise<Answer> {
  const response = await fetch(`${platform.base}${path}`, init);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const fromRaw = (raw: RawResponse): Answer => ({ status: raw.status, headers: raw.headers, text: raw.body });

async function assertHealthy(after: string): Promise<void> {
  const response = await fetch(`${platform.base}/v1/health`, { signal: AbortSignal.timeout(5000) });
  const body = await response.text();
  assert.equal(response.status, 200, `/v1/health after ${after}: ${response.status} ${body}`);
}

const auth = () => ({ Authorization: `Bearer ${platform.apiKey}` });
const json = { "Content-Type": "application/json" };

/** The platform's limits at its defaults (the suite sets none of the variables they come from). */
const DEFAULTS = loadConfig({});
const MESSAGES = MessageLimits.of(DEFAULTS);

/** The RPCs the gateway serves over Connect and gRPC-Web, as it picks them (the rest are reached over gRPC only). */
const BRIDGED = MODULES.flatMap((module) => (module.service ? bridgedMethods({ ...module.service, api: {} }).map((method) => `${module.service!.descriptor.typeName}/${method.name}`) : []));

describe("a hostile client against the embedded platform", { timeout: 15 * 60_000 }, () => {
  before(async () => {
    // made once, before any connection is open: the burst and the sign after it send the same body
    largeSignBody = JSON.stringify(signBody(await noisePdf(1, 24 * MB)));
    grpcPort = await freePort();
    platform = await startPlatform({
      GRPC_PORT: String(grpcPort),
      DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
      DOCSERVICE_MEMORY_BUDGET_MB: String(MEMORY_BUDGET_MB),
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_MAX_CONNECTIONS_PER_CLIENT: String(PER_CLIENT_CONNECTIONS),
      GRPC_MAX_CONNECTION_IDLE_MS: String(GRPC_IDLE_MS),
    });
    port = Number(new URL(platform.base).port);
    // the LibreOffice pool starts in the background: "healthy" means every backend is
    await waitFor(async () => (await fetch(`${platform.base}/v1/health`)).status === 200, { timeoutMs: 120_000, what: "every backend to be healthy" });
    // warm-up: one of each kind of work, so the baseline holds what a serving process holds
    const pdf = await textPdf(2);
    assertSound("warm-up sign", await send("/v1/sign", { method: "POST", headers: { ...json, ...auth() }, body: JSON.stringify(signBody(pdf)) }));
    assertSound("warm-up collect", await send("/v1/collect", { method: "POST", headers: json, body: JSON.stringify({ events: [{ timestamp: new Date().toISOString(), documentId: "warm-up-document-0001" }] }) }));
    memory = new ResidentSampler(platform.process.pid);
    afterWarmUp = memory.start;
  });

  after(async () => {
    memory?.stop();
    if (memory) {
      const mb = (bytes: number) => `${Math.round(bytes / MB)} MB`;
      console.log(`resident memory: after warm-up ${mb(afterWarmUp)}, peak ${mb(memory.peak)}, end ${mb(memory.last)}, budget ${MEMORY_BUDGET_MB} MB + margin ${RESIDENT_MARGIN_MB} MB`);
    }
    await platform?.stop();
  });

  test("compression bombs: refused before they inflate past the method's limit, on Connect, gRPC-Web and gRPC", async () => {
    // 254 KB that inflates to 256 MB of spaces
    const bomb = gzipSync(Buffer.alloc(256 * MB, 0x20), { level: 9 });
    for (const rpc of BRIDGED) {
      const answer = await send(`/${rpc}`, { method: "POST", headers: { ...json, ...auth(), "Content-Encoding": "gzip" }, body: bomb });
      assertSound(`Connect ${rpc}`, answer);
      assert.ok([400, 401, 403, 429, 501].includes(answer.status), `Connect ${rpc}: ${answer.status} ${answer.text}`);
      const web = await send(`/${rpc}`, {
        method: "POST",
        headers: { "Content-Type": "application/grpc-web+json", "Grpc-Encoding": "gzip", ...auth() },
        body: grpcEnvelope(bomb, true),
      });
      assert.ok(web.status < 500, `gRPC-Web ${rpc}: ${web.status}`);
      assert.notEqual(header(web, "grpc-status") ?? "", "13", `gRPC-Web ${rpc}: internal`);
    }
    // gRPC serves every method, the internal ones too, and holds each to its own limit as the message arrives and as it
    // inflates (RESOURCE_EXHAUSTED naming it); a method that carries no document takes no compressed message (UNIMPLEMENTED)
    for (const rpc of Object.keys(RPC_CARRIES)) {
      const [service, method] = rpc.split("/");
      const limit = String(MESSAGES.rpc(service!, method!));
      const grpc = await rawGrpcCall(grpcPort, `/${rpc}`, grpcEnvelope(bomb, true), { "grpc-encoding": "gzip", authorization: `Bearer ${platform.apiKey}` });
      assert.equal(grpc.status, 8, `gRPC ${rpc}: status ${grpc.status} ${grpc.message}`);
      assert.ok(grpc.message.includes(limit), `gRPC ${rpc}: ${grpc.message} (limit ${limit})`);
      if (!MESSAGES.rpcMayBeCompressed(service!, method!)) {
        const compressed = await rawGrpcCall(grpcPort, `/${rpc}`, grpcEnvelope(gzipSync(Buffer.alloc(16)), true), { "grpc-encoding": "gzip", authorization: `Bearer ${platform.apiKey}` });
        assert.equal(compressed.status, 12, `gRPC ${rpc}, a small compressed message: status ${compressed.status} ${compressed.message}`);
        const large = await rawGrpcCall(grpcPort, `/${rpc}`, grpcEnvelope(Buffer.alloc(MB)), { authorization: `Bearer ${platform.apiKey}` });
        assert.equal(large.status, 8, `gRPC ${rpc}, 1 MB: status ${large.status} ${large.message}`);
      }
      assert.ok(memory.sample() < (MEMORY_BUDGET_MB + RESIDENT_MARGIN_MB) * MB + afterWarmUp, `resident memory after ${rpc}'s bombs: ${Math.round(memory.last / MB)} MB`);
    }
    // A large plain body to a method that takes a few KB: refused on its declared length.
    const answer = await send("/docservice.v1.SigningService/GetVerificationKey", { method: "POST", headers: json, body: Buffer.alloc(50 * MB, 0x20) });
    assert.equal(answer.status, 429, answer.text);
    assert.match(answer.text, /resource_exhausted/);
    await assertHealthy("compression bombs");
  });

  test("deep nesting in every free-form field: a 400 naming the field, on /v1, Connect and gRPC", async () => {
    const pdf = (await textPdf(1)).toString("base64");
    const signed = (extra: string) => `{"document":{"base64":"${pdf}"},"signer":{"email":"a@example.test","name":"A"},"auditTrail":[{"type":"submit","timestamp":"2026-11-21T09:00:00Z"${extra}}]${""}`;
    const cases: [string, string, string, Record<string, string>][] = [
      ["sign metadata", "/v1/sign", `${signed("")},"metadata":${deepJson(20_000)}}`, auth()],
      ["sign audit data", "/v1/sign", `${signed(`,"data":${deepJson(20_000)}`)}}`, auth()],
      ["sign metadata arrays", "/v1/sign", `${signed("")},"metadata":{"a":${deepArray(50_000)}}}`, auth()],
      ["collect metadata", "/v1/collect", `{"metadata":${deepJson(5_000)},"events":[{"timestamp":"${new Date().toISOString()}","documentId":"deep-document-0001"}]}`, {}],
      ["annotate fields", "/v1/annotate", `{"document":{"base64":"${pdf}"},"fields":[{"id":"a","type":"table","value":${deepArray(20_000)}}]}`, auth()],
      ["verify", "/v1/verify", `{"document":{"base64":"${pdf}"},"x":${deepJson(20_000)}}`, auth()],
      ["license key", "/v1/admin/license-keys", `{"customer":${deepArray(1_000)}}`, { Authorization: `Bearer ${ADMIN_TOKEN}` }],
    ];
    for (const [what, path, body, headers] of cases) {
      const answer = await send(path, { method: "POST", headers: { ...json, ...headers }, body });
      assertSound(what, answer);
      assert.ok([400, 413].includes(answer.status), `${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
    // CollectRequest.metadata (field 6) as a Struct 3,000 levels deep: refused by the decoder's own recursion limit
    const report = Buffer.concat([Buffer.from([0x32]), varint(deepStructBinary(3_000).length), deepStructBinary(3_000)]);
    const collectGrpc = await rawGrpcCall(grpcPort, "/docservice.v1.TelemetryService/Collect", grpcEnvelope(report), {});
    assert.equal(collectGrpc.status, 3, `gRPC deep Struct in Collect: ${collectGrpc.status} ${collectGrpc.message}`);
    const connect = await send("/docservice.v1.SigningService/Sign", { method: "POST", headers: { ...json, ...auth() }, body: `{"metadata":${deepJson(20_000)}}` });
    assert.equal(connect.status, 400, connect.text);
    assert.match(connect.text, /invalid_argument/);
    // SignRequest.metadata (field 5) as a Struct 3,000 levels deep: decoded by recursion on the server
    const message = Buffer.concat([Buffer.from([0x2a]), varint(deepStructBinary(3_000).length), deepStructBinary(3_000)]);
    const grpc = await rawGrpcCall(grpcPort, "/docservice.v1.SigningService/Sign", grpcEnvelope(message), { authorization: `Bearer ${platform.apiKey}` });
    assert.equal(grpc.status, 3, `gRPC deep Struct: ${grpc.status} ${grpc.message}`);
    await assertHealthy("deep nesting");
  });

  test("undecodable messages are invalid_argument, never internal", async () => {
    const random = Buffer.from(Array.from({ length: 2000 }, (_, i) => (i * 7919 + 13) % 256));
    for (const rpc of BRIDGED) {
      const answer = await send(`/${rpc}`, { method: "POST", headers: { "Content-Type": "application/proto", ...auth() }, body: random });
      assertSound(`Connect proto ${rpc}`, answer);
      assert.doesNotMatch(answer.text, /"internal"/, `Connect proto ${rpc}: ${answer.text}`);
    }
    for (const rpc of Object.keys(RPC_CARRIES)) {
      const grpc = await rawGrpcCall(grpcPort, `/${rpc}`, grpcEnvelope(random), { authorization: `Bearer ${platform.apiKey}` });
      assert.notEqual(grpc.status, 13, `gRPC ${rpc}: internal (${grpc.message})`);
      const corrupt = await rawGrpcCall(grpcPort, `/${rpc}`, grpcEnvelope(random, true), { "grpc-encoding": "gzip", authorization: `Bearer ${platform.apiKey}` });
      assert.notEqual(corrupt.status, 13, `gRPC ${rpc}, corrupt gzip: internal (${corrupt.message})`);
    }
    await assertHealthy("undecodable messages");
  });

  test("pathological Markdown and HTML: a 422 naming the limit within seconds, never a stack overflow", async () => {
    const sources: [string, string, string][] = [
      ["50,000 nested block quotes", "md", "> ".repeat(50_000) + "deep"],
      ["50,000 nested list items", "md", "- ".repeat(50_000) + "deep"],
      ["270 KB of emphasis", "md", "a*".repeat(135_000)],
      ["100,000 nested divs", "html", "<div>".repeat(100_000) + "deep" + "</div>".repeat(100_000)],
    ];
    for (const [what, from, text] of sources) {
      const form = new FormData();
      form.append("file", new Blob([text]), `hostile.${from}`);
      const started = performance.now();
      const answer = await send(`/v1/convert?from=${from}`, { method: "POST", headers: auth(), body: form });
      const seconds = (performance.now() - started) / 1000;
      assertSound(what, answer);
      assert.equal(answer.status, 422, `${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
      assert.ok(seconds < 4, `${what} took ${seconds.toFixed(1)} s`);
    }
    await assertHealthy("pathological sources");
  });

  test("a PDF that sends the parser's recovery through megabytes of digits and text: answered within seconds", async () => {
    const pdf = (await textPdf(1)).toString("latin1");
    // a broken object header early on makes pdf-lib scan the rest byte by byte for the next one
    const at = pdf.indexOf(" 0 obj");
    const hostile = Buffer.from(`${pdf.slice(0, at)} 0 ob ${"0".repeat(2 * MB)} ${"x".repeat(2 * MB)} endobj\n${pdf.slice(at)}`, "latin1");
    for (const path of ["/v1/verify", "/v1/sign"]) {
      const started = performance.now();
      const body = path === "/v1/sign" ? signBody(hostile) : { document: { base64: hostile.toString("base64") } };
      const answer = await send(path, { method: "POST", headers: { ...json, ...auth() }, body: JSON.stringify(body) });
      const seconds = (performance.now() - started) / 1000;
      assertSound(path, answer);
      assert.ok(seconds < 5, `${path} of the PDF took ${seconds.toFixed(1)} s`);
    }
    await assertHealthy("pathological PDFs");
  });

  test("a capability this deployment lacks: 501 without Retry-After, once the document itself is found sound", async () => {
    const timestamp = (document: Buffer) => send("/v1/timestamp", { method: "POST", headers: { ...json, ...auth() }, body: JSON.stringify({ document: { base64: document.toString("base64") } }) });
    const signed = await send("/v1/sign", { method: "POST", headers: { ...json, ...auth() }, body: JSON.stringify(signBody(await textPdf(1))) });
    assert.equal(signed.status, 200, signed.text.slice(0, 200));
    const notConfigured = await timestamp(Buffer.from(JSON.parse(signed.text).document.base64, "base64"));
    assertSound("timestamp without a TSA", notConfigured);
    assert.equal(notConfigured.status, 501, notConfigured.text);
    assert.match(notConfigured.text, /NOT_CONFIGURED/);
    assert.equal(header(notConfigured, "retry-after"), undefined);
    const damaged = await timestamp(Buffer.from("%PDF-1.7\n1 0 obj << >> endobj\n%%EOF\n"));
    assert.equal(damaged.status, 422, damaged.text);
    const level = await send("/v1/sign", { method: "POST", headers: { ...json, ...auth() }, body: JSON.stringify(signBody(await textPdf(1), { level: "B-LT" })) });
    assert.equal(level.status, 501, level.text);
  });

  test("oversized identifiers: 400 or 401 naming the field, never the store's error", async () => {
    const long = "k".repeat(10_000);
    const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const cases: [string, string, RequestInit][] = [
      ["X-License-Key", "/v1/collect", { method: "POST", headers: { ...json, "X-License-Key": long }, body: JSON.stringify({ events: [{ timestamp: new Date().toISOString(), documentId: "doc-identifier-0001" }] }) }],
      ["usage licenseKey", `/v1/usage?licenseKey=${long}&from=2026-11-01&to=2026-11-02`, { headers: admin }],
      ["remove licenseKey", `/v1/admin/license-keys?licenseKey=${long}`, { method: "DELETE", headers: admin }],
      ["add licenseKey", "/v1/admin/license-keys", { method: "POST", headers: { ...json, ...admin }, body: JSON.stringify({ licenseKey: long.slice(0, 3000) }) }],
      ["register email", `/v1/auth/register?email=${"a".repeat(5000)}@example.test`, {}],
      ["verify email", `/v1/auth/verify?email=${"a".repeat(5000)}@example.test&code=123456`, {}],
      ["api key", "/v1/auth/key", { headers: { Authorization: `Bearer dsk_${long}` } }],
      ["documentId", "/v1/collect", { method: "POST", headers: json, body: JSON.stringify({ events: [{ timestamp: new Date().toISOString(), documentId: long }] }) }],
      ["eventId", "/v1/sign", { method: "POST", headers: { ...json, ...auth() }, body: JSON.stringify(signBody(Buffer.from("%PDF-1.4\n"), { eventId: long })) }],
      ["X-Request-Id", "/v1/health", { headers: { "X-Request-Id": long } }],
    ];
    for (const [what, path, init] of cases) {
      const answer = await send(path, init);
      assertSound(what, answer);
      if (what === "X-Request-Id") {
        assert.equal(answer.status, 200);
        assert.notEqual(header(answer, "x-request-id"), long, "an oversized X-Request-Id is replaced");
      } else assert.ok([400, 401].includes(answer.status), `${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
    await assertHealthy("oversized identifiers");
  });

  test("oversized and malformed HTTP: the JSON error body and an X-Request-Id, as every other error", async () => {
    const cases: [string, string, number][] = [
      ["100 KB of headers", `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(100_000)}\r\n\r\n`, 431],
      ["1,000 headers", `GET /v1/health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 1000 }, (_, i) => `X-${i}: ${"a".repeat(20)}\r\n`).join("")}\r\n`, 431],
      ["a 20 KB request line", `GET /v1/health?${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
      ["Content-Length with Transfer-Encoding", "POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400],
      ["a bad chunk size", "POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400],
      ["Content-Length: -1", "POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400],
      ["no Host", "GET /v1/health HTTP/1.1\r\n\r\n", 400],
      ["Expect: 200-bogus", "GET /v1/health HTTP/1.1\r\nHost: x\r\nExpect: 200-bogus\r\n\r\n", 417],
      ["a bare LF request", "GET /v1/health HTTP/1.1\nHost: x\n\n", 400],
      ["not HTTP at all", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 hello\r\n\r\n", 400],
      ["a compressed /v1 body", 'POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}', 415],
    ];
    for (const [what, bytes, status] of cases) {
      const answer = fromRaw(await rawExchange(port, bytes));
      assertSound(what, answer);
      assert.equal(answer.status, status, `${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
      assert.ok(header(answer, "x-request-id"), `${what}: no X-Request-Id`);
    }
    await assertHealthy("malformed HTTP");
  });

  test("slow headers and slow bodies are answered 408 and closed within their limits", async () => {
    const [headers, body] = await Promise.all([
      trickle(port, "GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n\r\n", 500, 60_000),
      // headers at once, then one byte of the body every 2 s
      trickle(port, "x".repeat(1000), 2000, 60_000, { head: "POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n" }),
    ]);
    assertSound("slow headers", fromRaw(headers));
    assert.equal(headers.status, 408);
    assert.ok(headers.ms < HEADERS_TIMEOUT_MS + 2500, `slow headers held ${Math.round(headers.ms)} ms`);
    assertSound("slow body", fromRaw(body));
    assert.equal(body.status, 408);
    // the rate is judged over 10 s windows (HTTP_MIN_BODY_BYTES_PER_SECOND)
    assert.ok(body.ms < 22_000, `slow body held ${Math.round(body.ms)} ms`);
    await assertHealthy("slow requests");
  });

  test("bodies answered before they are read: at once, and the connection closed within seconds, never read to their end", async () => {
    const signLimit = MESSAGES.route("POST", "/v1/sign");
    const post = (path: string, framing: string, headers = "") => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}${framing}\r\n\r\n`;
    const cases: [string, string, boolean, number][] = [
      ["an endless chunked /v1/collect", post("/v1/collect", "Transfer-Encoding: chunked"), true, 413],
      ["/v1/sign without credentials and Content-Length: 40000000000", post("/v1/sign", "Content-Length: 40000000000"), false, 401],
      ["a chunked /v1/sign without credentials", post("/v1/sign", "Transfer-Encoding: chunked"), true, 401],
      ["an endless chunked /v1/sign with a key", post("/v1/sign", "Transfer-Encoding: chunked", `Authorization: Bearer ${platform.apiKey}\r\n`), true, 413],
    ];
    for (const [what, head, chunked, status] of cases) {
      const answer = await flood(port, head, { chunked, giveUpMs: 60_000 });
      assertSound(what, fromRaw(answer));
      assert.equal(answer.status, status, `${what}: ${answer.status} ${answer.body.slice(0, 200)}`);
      assert.equal(answer.headers.connection, "close", what);
      // the sign with a key reads its 39 MB first
      assert.ok(answer.answerMs < (status === 413 && chunked && head.includes("/v1/sign") ? 10_000 : 2000), `${what}: answered after ${Math.round(answer.answerMs)} ms`);
      assert.ok(!answer.gaveUp && answer.ms - answer.answerMs < UNREAD_BODY_MAX_MS + 3000, `${what}: closed ${Math.round(answer.ms - answer.answerMs)} ms after the answer`);
      // what the client could write: what the route read, 1 MiB more, and the kernel's buffers at both ends (before: gigabytes)
      const read = status === 413 && head.includes("/v1/sign") ? signLimit : 64 * 1024;
      assert.ok(answer.sentBytes < read + 64 * MB, `${what}: the connection took ${Math.round(answer.sentBytes / MB)} MB`);
    }
    await assertHealthy("bodies answered early");
  });

  test(`document.url: past ${MAX_URL_CHARS} characters a 400 naming it on /v1 and Connect; a message repeats only the start of a long host`, async () => {
    const long = `https://example.invalid/${"a".repeat(10_000)}`;
    const huge = `http://${"a".repeat(MB)}/`;
    const fields = [{ id: "a", type: "text", value: "x" }];
    const cases: [string, string, unknown][] = [
      ["sign", "/v1/sign", signBody({ url: long })],
      ["verify", "/v1/verify", { document: { url: long } }],
      ["verify, a 1 MB host", "/v1/verify", { document: { url: huge } }],
      ["timestamp", "/v1/timestamp", { document: { url: long } }],
      ["annotate", "/v1/annotate", { document: { url: long }, fields }],
      ["Connect Verify", "/docservice.v1.SigningService/Verify", { document: { url: huge } }],
      ["Connect Annotate", "/docservice.v1.AnnotationService/Annotate", { document: { url: long }, fields }],
    ];
    for (const [what, path, body] of cases) {
      const answer = await send(path, { method: "POST", headers: { ...json, ...auth() }, body: JSON.stringify(body) });
      assertSound(what, answer);
      assert.equal(answer.status, 400, `${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
      assert.match(answer.text, /document\.url: must be at most 8192 characters|"field":"document\.url","issue":"must be at most 8192 characters"/, what);
      assert.ok(answer.text.length < 1000, `${what}: an answer of ${answer.text.length} bytes`);
    }
    // within the limit, a host that does not resolve: the message holds the host's start only
    const unresolved = await send("/v1/verify", { method: "POST", headers: { ...json, ...auth() }, body: JSON.stringify({ document: { url: `http://${"a".repeat(8000)}/` } }) });
    assertSound("a long host", unresolved);
    assert.equal(unresolved.status, 422, unresolved.text.slice(0, 300));
    assert.ok(unresolved.text.length < 1000, `an answer of ${unresolved.text.length} bytes`);
    await assertHealthy("long URLs");
  });

  test("thousands of idle and slow connections: health keeps answering, the excess per client is refused, idle ones are closed", async () => {
    const baseline = await healthLatencies(10);
    const socketsBefore = openSockets(platform.process.pid);
    // from other loopback addresses than the health checks' 127.0.0.1
    const idle = await Promise.all(Array.from({ length: 3000 }, (_, i) => idleConnection(port, `127.0.0.${2 + (i % 3)}`)));
    const slow = Array.from({ length: 200 }, (_, i) => trickle(port, "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n", 1000, 30_000, { localAddress: `127.0.0.${5 + (i % 2)}` }));
    const overCap = await Promise.all(Array.from({ length: PER_CLIENT_CONNECTIONS + 200 }, () => idleConnection(port, "127.0.0.7")));
    after(() => {
      for (const socket of [...idle, ...overCap]) socket.destroy();
    });
    const held = await healthLatencies(20);
    console.log(`/v1/health latency: median ${median(baseline).toFixed(1)} ms alone; median ${median(held).toFixed(1)} ms, max ${Math.max(...held).toFixed(1)} ms with 3,000 idle, 200 slow and ${overCap.length} more from one address`);
    assert.ok(Math.max(...held) < 1000, `health took up to ${Math.max(...held).toFixed(0)} ms`);
    // a connection the listen queue had no room for yet is accepted (and refused) once the handshake is retried
    const refused = () => overCap.filter((socket) => socket.destroyed).length;
    await waitFor(async () => refused() >= 200, { timeoutMs: 10_000, what: "the connections past the per-client cap to be closed" }).catch(() => {});
    assert.ok(refused() >= 200, `only ${refused()} of the connections past the per-client cap were closed`);
    await sleep(HEADERS_TIMEOUT_MS + 3000);
    // counted on the server's side: a connection the kernel completed but the listen queue had no room for is never the process's
    const stillOpen = openSockets(platform.process.pid) - socketsBefore;
    assert.ok(stillOpen < 20, `${stillOpen} more connections open in the server than before the flood, after the headers timeout`);
    for (const answer of await Promise.all(slow)) assert.ok(answer.status === 408 || answer.closedSilently, `slow connection answered ${answer.status}`);
    await assertHealthy("connection floods");
  });

  test("an idle gRPC connection is sent away", async () => {
    const started = performance.now();
    const session = http2Connect(`http://127.0.0.1:${grpcPort}`);
    session.on("error", () => {});
    const wentAway = await Promise.race([once(session, "goaway").then(() => true), sleep(GRPC_IDLE_MS + 5000).then(() => false)]);
    session.destroy();
    assert.ok(wentAway, `no GOAWAY within ${GRPC_IDLE_MS + 5000} ms`);
    assert.ok(performance.now() - started >= GRPC_IDLE_MS - 100, "sent away before it was idle for GRPC_MAX_CONNECTION_IDLE_MS");
  });

  test("bursts of large uploads and signs: served or 503 with Retry-After, within the memory budget", async () => {
    // The burst opens connections of its own. A keep-alive connection left idle by the tests before would be taken up by
    // its first requests just as the platform closes it for idleness, unread, when this process, starved by the burst's
    // uploads, runs its timer late: a race of HTTP/1.1 keep-alive that every client meets, and not an answer of the
    // platform's (seen as `write EPIPE` with the upload's bytes still unread at the platform).
    await sleep(DEFAULTS.keepAliveTimeoutMs + 1000);
    const docx = Buffer.concat([Buffer.from("PK\x03\x04"), Buffer.alloc(MB, 1)]);
    const uploads = Array.from({ length: 100 }, async () => {
      const form = new FormData();
      form.append("file", new Blob([docx]), "burst.docx");
      return send("/v1/convert?from=docx", { method: "POST", headers: auth(), body: form });
    });
    const signs = Array.from({ length: 10 }, () => send("/v1/sign", { method: "POST", headers: { ...json, ...auth() }, body: largeSignBody }));
    const answers = await Promise.all([...uploads, ...signs]);
    const statuses = new Map<number, number>();
    for (const [i, answer] of answers.entries()) {
      assertSound(i < 100 ? "upload" : "sign", answer);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    }
    console.log(`burst answers: ${[...statuses].map(([status, n]) => `${status}×${n}`).join(" ")}`);
    assert.ok(statuses.get(503), "the burst never reached the memory budget");
    // which requests the budget let in depends on the order they arrived in; a sign refused is served once the burst is
    // over, as its Retry-After says
    const refusedSign = answers.slice(100).find((answer) => answer.status === 503);
    if (refusedSign) {
      await sleep(Number(header(refusedSign, "retry-after")) * 1000);
      const again = await send("/v1/sign", { method: "POST", headers: { ...json, ...auth() }, body: largeSignBody });
      assert.equal(again.status, 200, `a 24 MB sign after the burst: ${again.status} ${again.text.slice(0, 300)}`);
    }
    await assertHealthy("bursts");
  });

  test("resident memory stayed under the budget plus the margin, and ends within twice its size after warm-up", async () => {
    memory.stop();
    assert.ok(memory.peak < afterWarmUp + (MEMORY_BUDGET_MB + RESIDENT_MARGIN_MB) * MB, `peak ${Math.round(memory.peak / MB)} MB`);
    // what the bursts held is given back to the collector, not kept
    await sleep(3000);
    assert.ok(memory.sample() < 2 * afterWarmUp, `end ${Math.round(memory.last / MB)} MB against ${Math.round(afterWarmUp / MB)} MB after warm-up`);
  });
});

async function healthLatencies(count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(`${platform.base}/v1/health`, { signal: AbortSignal.timeout(5000) });
    await response.text();
    assert.equal(response.status, 200);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

/** Sockets the process holds open (listeners and connections alike). */
function openSockets(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
    } catch {
      return false;
    }
  }).length;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
