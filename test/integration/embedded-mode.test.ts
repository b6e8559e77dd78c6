import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { KeyService } from "../../gen/es/docservice/v1/keys_pb.js";
import { call, codeIn } from "../support/key-flow.js";
import { freePort } from "../support/ports.js";
import { answers, startService, type ServiceProcess } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";

// `npm start`'s process: every service in one process, embedded stores, mail to the outbox.
describe("embedded mode (one process, local store, outbox)", () => {
  let dataDir: string;
  let base: string;
  let env: Record<string, string>;
  let platform: ServiceProcess;
  let apiKey: string;
  const adminToken = "embedded-test-admin-token";

  const start = () => startService("all", env, () => answers(`${base}/v1/health`));

  /** The code of the newest .eml in the outbox for the address. */
  function codeFromOutbox(email: string): string {
    const outbox = join(dataDir, "outbox");
    const mails = readdirSync(outbox).sort().map((name) => readFileSync(join(outbox, name), "utf8"));
    const mail = mails.filter((text) => text.includes(`To: ${email}`)).at(-1);
    assert.ok(mail, `no mail to ${email} in ${outbox}`);
    return codeIn(mail.replace(/=\n/g, ""));
  }

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "docservice-embedded-"));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // a drain as the operator sets it, shortened
    env = { HOST: "127.0.0.1", PORT: String(port), GRPC_PORT: "0", DOCSERVICE_DATA_DIR: dataDir, DOCSERVICE_ADMIN_TOKEN: adminToken, SHUTDOWN_DRAIN_MS: "2000" };
    platform = await start();
  });

  after(async () => {
    await platform?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("register → outbox → verify → GET /v1/auth/key", async () => {
    const email = "grace@example.test";
    assert.equal((await call(base, `/v1/auth/register?email=${email}`)).status, 200);
    await waitFor(async () => /"path":"[^"]+outbox[^"]+\.eml","to":"grace@example.test","msg":"e-mail written to the outbox"/.test(platform.output()), { what: "the outbox path in the log" });
    const verified = await call(base, `/v1/auth/verify?email=${email}&code=${codeFromOutbox(email)}`);
    assert.equal(verified.status, 200);
    apiKey = verified.body.apiKey;
    const info = await call(base, "/v1/auth/key", { apiKey });
    assert.equal(info.status, 200);
    assert.equal(info.body.maskedEmail, "g****@example.test");
  });

  test("Connect and gRPC-Web clients reach KeyService through the gateway", async () => {
    for (const transport of [createConnectTransport({ baseUrl: base, httpVersion: "1.1" }), createGrpcWebTransport({ baseUrl: base, httpVersion: "1.1" })]) {
      const keys = createClient(KeyService, transport);
      const { key } = await keys.getKeyInfo({ apiKey });
      assert.equal(key?.displayPrefix, apiKey.slice(0, 10));
      await assert.rejects(keys.getKeyInfo({ apiKey: "dsk_not-a-key" }), /malformed or revoked/);
      // Authenticate answers only the gateway's identity: not exposed to the outside at all, not even with the admin token.
      await assert.rejects(keys.authenticate({ apiKey }, { headers: { Authorization: `Bearer ${adminToken}` } }), /unimplemented|No route/i);
    }
  });

  test("every response carries X-Request-Id, and an incoming one is kept", async () => {
    const fresh = await call(base, "/v1/health");
    assert.match(fresh.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
    const kept = await call(base, "/v1/nowhere", { headers: { "X-Request-Id": "trace-123" } });
    assert.equal(kept.status, 404);
    assert.equal(kept.headers.get("x-request-id"), "trace-123");
    assert.equal(kept.body.requestId, "trace-123");
  });

  test("/v1/health reports version, uptime and every backend", async () => {
    // The LibreOffice pool reports down until its first instance is up.
    await waitFor(async () => (await call(base, "/v1/health")).status === 200, { what: "every backend up", timeoutMs: 90_000 });
    const health = await call(base, "/v1/health");
    assert.equal(health.status, 200);
    assert.equal(health.body.status, "ok");
    assert.equal(health.body.version, JSON.parse(readFileSync("package.json", "utf8")).version);
    assert.equal(typeof health.body.uptimeSeconds, "number");
    assert.equal(health.body.backends.keys.status, "ok");
    assert.equal(health.body.backends.conversion.status, "ok");
  });

  test("/metrics counts requests per route and status", async () => {
    await call(base, "/v1/auth/key");
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /docservice_http_requests_total\{method="GET",route="\/v1\/auth\/key",status="401"\} [1-9]/);
    assert.match(metrics, /docservice_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/v1\/auth\/key",status="200"\}/);
  });

  test("SIGTERM: out of rotation while it drains (health 503 stopping, requests still served), then closed; exits 0; keys survive a restart", async () => {
    const stopped = platform.stop("SIGTERM");
    await waitFor(async () => (await fetch(`${base}/v1/health`)).status === 503, { what: "/v1/health to answer 503 once SIGTERM arrived" });
    const health = await fetch(`${base}/v1/health`);
    assert.equal(((await health.json()) as { status: string }).status, "stopping");
    assert.equal(health.headers.get("connection"), "close");
    assert.equal((await call(base, "/v1/auth/key", { apiKey })).status, 200, "requests are still served while draining");
    assert.equal(await stopped, 0);
    await assert.rejects(fetch(`${base}/v1/health`), "nothing listens once stopped");
    assert.match(platform.output(), /"drainMs":2000,"msg":"shutting down"/);
    assert.match(platform.output(), /"msg":"stopped"/, "buffered log lines are flushed on exit");
    platform = await start();
    const info = await call(base, "/v1/auth/key", { apiKey });
    assert.equal(info.status, 200);
  });
});
