import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { loadConfig } from "../../services/configuration.js";
import { DataDir } from "../../services/core/data-dir.js";
import { ServiceError } from "../../services/core/errors.js";
import { createLogger } from "../../services/core/logger.js";
import type { KeyService } from "../../services/keys/key-service.js";
import { provisionKeyService, type ProvisionedKeyService } from "../../services/keys/provision.js";
import { codeIn } from "../support/key-flow.js";
import { startMailpit, type Mailpit } from "../support/mailpit.js";
import { startRedis, type RedisServer } from "../support/redis.js";

// KeyService in-process with a clock the test moves, against real Redis and real SMTP.
describe("KeyService rules (Redis + SMTP, injectable clock)", () => {
  let redis: RedisServer;
  let mailpit: Mailpit;
  let provisioned: ProvisionedKeyService;
  let keys: KeyService;
  let dataDir: string;
  let now = Date.parse("2026-01-01T00:00:00Z");

  before(async () => {
    [redis, mailpit] = await Promise.all([startRedis(), startMailpit()]);
    dataDir = mkdtempSync(join(tmpdir(), "docservice-keys-"));
    const config = loadConfig({
      DOCSERVICE_DATA_DIR: dataDir,
      REDIS_URL: redis.url,
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(mailpit.smtpPort),
      RATE_LIMIT_REGISTER_PER_EMAIL: "1000/60",
      RATE_LIMIT_VERIFY_PER_EMAIL: "1000/60",
    });
    provisioned = provisionKeyService(config, new DataDir(dataDir), createLogger("silent"), () => now);
    keys = provisioned.service;
    await waitForRedis();
  });

  after(async () => {
    await provisioned?.close();
    await Promise.all([redis?.stop(), mailpit?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function waitForRedis() {
    for (let i = 0; i < 100; i++) {
      try {
        return await keys.health();
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async function register(email: string): Promise<string> {
    const sent = new Date(Date.now() - 1000);
    await keys.register({ email, clientIp: "" });
    return codeIn((await mailpit.latestMessageTo(email, { after: sent })).text);
  }

  async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
    const error = await promise.then(
      () => assert.fail("expected a rejection"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ServiceError, String(error));
    return error;
  }

  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

  test("a code expires after 15 minutes", async () => {
    const email = "late@example.test";
    const code = await register(email);
    now += 15 * 60 * 1000;
    const error = await rejection(keys.verify({ email, code, clientIp: "" }));
    assert.equal(error.code, "INVALID_CODE");
    now -= 15 * 60 * 1000;
    assert.equal((await rejection(keys.verify({ email, code, clientIp: "" }))).code, "INVALID_CODE", "an expired code is deleted, not revived");
  });

  test("a code just before expiry still works", async () => {
    const email = "punctual@example.test";
    const code = await register(email);
    now += 15 * 60 * 1000 - 1;
    const verified = await keys.verify({ email, code, clientIp: "" });
    assert.match(verified.apiKey, /^dsk_/);
  });

  test("5 wrong codes kill the code", async () => {
    const email = "guesser@example.test";
    const code = await register(email);
    for (let i = 0; i < 5; i++) {
      assert.equal((await rejection(keys.verify({ email, code: wrong(code), clientIp: "" }))).code, "INVALID_CODE");
    }
    assert.equal((await rejection(keys.verify({ email, code, clientIp: "" }))).code, "INVALID_CODE");
  });

  test("4 wrong codes leave the right one working", async () => {
    const email = "clumsy@example.test";
    const code = await register(email);
    for (let i = 0; i < 4; i++) await rejection(keys.verify({ email, code: wrong(code), clientIp: "" }));
    assert.match((await keys.verify({ email, code, clientIp: "" })).apiKey, /^dsk_/);
  });

  test("parallel guesses cannot exceed the attempt limit", async () => {
    const email = "swarm@example.test";
    const code = await register(email);
    const guesses = Array.from({ length: 40 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, "0"));
    await Promise.allSettled(guesses.map((guess) => keys.verify({ email, code: guess, clientIp: "" })));
    assert.equal((await rejection(keys.verify({ email, code, clientIp: "" }))).code, "INVALID_CODE");
  });

  test("a new register replaces the old code", async () => {
    const email = "twice@example.test";
    const first = await register(email);
    let second = await register(email);
    while (second === first) second = await register(email);
    assert.equal((await rejection(keys.verify({ email, code: first, clientIp: "" }))).code, "INVALID_CODE");
    assert.match((await keys.verify({ email, code: second, clientIp: "" })).apiKey, /^dsk_/);
  });

  test("concurrent correct verifies issue exactly one key", async () => {
    const email = "race@example.test";
    const code = await register(email);
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => keys.verify({ email, code, clientIp: "" })));
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  });

  test("revoke by e-mail ends every key of the address", async () => {
    const email = "many@example.test";
    const apiKeys = [];
    for (let i = 0; i < 2; i++) apiKeys.push((await keys.verify({ email, code: await register(email), clientIp: "" })).apiKey);
    for (const apiKey of apiKeys) assert.equal((await keys.authenticate({ apiKey })).principal?.email, email);
    assert.equal((await keys.revoke({ email: "MANY@example.test" })).revokedCount, 2);
    for (const apiKey of apiKeys) assert.equal((await rejection(keys.authenticate({ apiKey }))).code, "UNAUTHENTICATED");
  });

  test("known and unknown addresses take the same time to register", async () => {
    const known = "timing-known@example.test";
    await keys.verify({ email: known, code: await register(known), clientIp: "" });
    const timings = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < 15; i++) {
      for (const [kind, email] of [["known", known], ["unknown", `timing-unknown-${i}@example.test`]] as const) {
        const started = performance.now();
        await keys.register({ email, clientIp: "" });
        timings[kind].push(performance.now() - started);
      }
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const [knownMedian, unknownMedian] = [median(timings.known), median(timings.unknown)];
    const gap = Math.abs(knownMedian - unknownMedian);
    assert.ok(gap < Math.max(3, 0.5 * Math.min(knownMedian, unknownMedian)), `medians ${knownMedian.toFixed(2)} vs ${unknownMedian.toFixed(2)} ms`);
  });
});
