import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { remoteHealthCheck } from "../../services/grpc/grpc-health-client.js";
import { startMailpit, type Mailpit } from "../support/mailpit.js";
import { call, codeIn, issueKey, registerAndReadCode } from "../support/key-flow.js";
import { freePort } from "../support/ports.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { answers, plaintextTransport, startService, type ServiceProcess } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";

// KeyService and the gateway as two processes, against real Redis and a real SMTP server (Mailpit).
describe("key issuance in split mode (Redis + SMTP)", () => {
  let redis: RedisServer;
  let mailpit: Mailpit;
  let keys: ServiceProcess;
  let conversion: ServiceProcess;
  let gateway: ServiceProcess;
  let base: string;

  let dataDir: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "docservice-split-keys-"));
    [redis, mailpit] = await Promise.all([startRedis(), startMailpit()]);
    const grpcPort = await freePort();
    const httpPort = await freePort();
    const keysAddress = `127.0.0.1:${grpcPort}`;
    const keysHealthy = remoteHealthCheck(keysAddress, "docservice.v1.KeyService", 1000, plaintextTransport);
    keys = await startService(
      "keys",
      {
        HOST: "127.0.0.1",
        GRPC_PORT: String(grpcPort),
        REDIS_URL: redis.url,
        SMTP_HOST: "127.0.0.1",
        SMTP_PORT: String(mailpit.smtpPort),
        KEYS_CODE_PEPPER: "split-mode-test-pepper-0123456789",
        KEYS_AUTH_CACHE_TTL_MS: "200",
        RATE_LIMIT_REGISTER_PER_EMAIL: "3/3600",
      },
      () => keysHealthy().then(() => true),
    );
    const conversionAddress = `127.0.0.1:${await freePort()}`;
    const conversionHealthy = remoteHealthCheck(conversionAddress, "docservice.v1.ConversionService", 1000, plaintextTransport);
    conversion = await startService(
      "conversion",
      { HOST: "127.0.0.1", GRPC_PORT: conversionAddress.split(":")[1], CONVERSION_POOL_SIZE: "1", DOCSERVICE_DATA_DIR: dataDir },
      () => conversionHealthy().then(() => true),
    );
    base = `http://127.0.0.1:${httpPort}`;
    gateway = await startService(
      "gateway",
      { HOST: "127.0.0.1", PORT: String(httpPort), KEYS_SERVICE_ADDR: keysAddress, CONVERSION_SERVICE_ADDR: conversionAddress },
      () => answers(`${base}/v1/health`),
    );
  });

  after(async () => {
    await Promise.all([gateway?.stop(), keys?.stop(), conversion?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
    await Promise.all([redis?.stop(), mailpit?.stop()]);
  });

  test("register → mail → verify → use the key → revoke → rejected", async () => {
    const email = "ada@example.test";
    const code = await registerAndReadCode(base, email, mailpit);
    const verified = await call(base, `/v1/auth/verify?email=${email}&code=${code}`);
    assert.equal(verified.status, 200);
    const apiKey: string = verified.body.apiKey;
    assert.match(apiKey, /^dsk_[0-9A-Za-z]{38}$/);
    assert.equal(verified.body.key.maskedEmail, "a***@example.test");

    const info = await call(base, "/v1/auth/key", { apiKey });
    assert.equal(info.status, 200);
    assert.equal(info.body.displayPrefix, apiKey.slice(0, 10));
    assert.equal(info.body.keyId, verified.body.key.keyId);

    const replay = await call(base, `/v1/auth/verify?email=${email}&code=${code}`);
    assert.equal(replay.status, 401, "a used code gives no second key");
    assert.equal(replay.body.code, "INVALID_CODE");
    assert.equal(replay.body.apiKey, undefined);

    const revoked = await call(base, "/v1/auth/key", { method: "DELETE", apiKey });
    assert.deepEqual([revoked.status, revoked.body.revoked], [200, 1]);
    const rejected = await call(base, "/v1/auth/key", { apiKey });
    assert.equal(rejected.status, 401);
    assert.equal(rejected.body.code, "UNAUTHENTICATED");
    assert.equal(rejected.headers.get("www-authenticate"), 'Bearer realm="docservice"');
  });

  test("only a hash of the key and of the code reach Redis", async () => {
    const email = "hash-check@example.test";
    const code = await registerAndReadCode(base, email, mailpit);
    const { createClient } = await import("redis");
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const stored = await client.hGetAll(`ds:code:${email}`);
      assert.ok(stored.hash, "the code is stored");
      assert.notEqual(stored.hash, code);
      assert.ok(!JSON.stringify(stored).includes(code));
      const apiKey = (await call(base, `/v1/auth/verify?email=${email}&code=${code}`)).body.apiKey as string;
      for (const key of await client.keys("ds:*")) {
        const type = await client.type(key);
        const dump = type === "hash" ? JSON.stringify(await client.hGetAll(key)) : type === "set" ? JSON.stringify(await client.sMembers(key)) : "";
        assert.ok(!key.includes(apiKey) && !dump.includes(apiKey), `${key} holds the raw key`);
      }
    } finally {
      await client.close();
    }
  });

  test("a known and an unknown address get the same answer", async () => {
    await issueKey(base, "known@example.test", mailpit);
    const known = await call(base, "/v1/auth/register?email=known@example.test");
    const unknown = await call(base, "/v1/auth/register?email=never-seen@example.test");
    assert.equal(known.status, unknown.status);
    assert.deepEqual(known.body, unknown.body);
    assert.deepEqual([...known.headers.keys()].sort(), [...unknown.headers.keys()].sort());
  });

  test("invalid e-mail → 400 with the JSON error body", async () => {
    const response = await call(base, "/v1/auth/register?email=not-an-address");
    assert.equal(response.status, 400);
    assert.equal(response.body.code, "VALIDATION_ERROR");
    assert.equal(response.body.error, "Bad Request");
    assert.equal(response.body.requestId, response.headers.get("x-request-id"));
    assert.deepEqual(response.body.details, [{ field: "email", issue: "is not a valid e-mail address" }]);
  });

  test("too many registrations for one address → 429 with Retry-After", async () => {
    const email = "eager@example.test";
    for (let i = 0; i < 3; i++) assert.equal((await call(base, `/v1/auth/register?email=${email}`)).status, 200);
    const limited = await call(base, `/v1/auth/register?email=${email}`);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, "RATE_LIMITED");
    const retryAfter = Number(limited.headers.get("retry-after"));
    assert.ok(retryAfter > 3000 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
    assert.equal(await mailpit.countTo(email), 3, "no mail for the refused request");
  });

  test("Redis stopped mid-test → 503 JSON error; the service recovers when Redis returns", async () => {
    await redis.stop();
    try {
      const down = await call(base, "/v1/auth/register?email=outage@example.test");
      assert.equal(down.status, 503);
      assert.equal(down.body.code, "UNAVAILABLE");
      assert.ok(Number(down.headers.get("retry-after")) >= 1);
      await waitFor(async () => (await call(base, "/v1/health")).status === 503, { what: "health to report the key store down" });
    } finally {
      await redis.start();
    }
    await waitFor(async () => (await call(base, "/v1/auth/register?email=outage@example.test")).status === 200, {
      what: "key service to recover",
      timeoutMs: 15_000,
    });
    const mail = await mailpit.latestMessageTo("outage@example.test");
    assert.match(codeIn(mail.text), /^\d{6}$/);
    await waitFor(async () => (await call(base, "/v1/health")).body.status === "ok", { what: "health to recover" });
  });
});
