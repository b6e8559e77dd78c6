import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { rejection } from "../../test/support/service-errors.js";
import { createLogger } from "../core/logger.js";
import { OutboxMailer } from "./mail/outbox-mailer.js";
import { generateApiKey, isWellFormedApiKey } from "./api-key.js";
import { EmbeddedKeyStore } from "./embedded-key-store.js";
import { KeyService, type KeyServiceSettings } from "./key-service.js";
import { RateLimits, type RateSettings } from "./rate-limits.js";

const logger = createLogger("silent");
const roomy = { points: 1000, seconds: 60 };
const ROOMY_LIMITS: RateSettings = { registerPerEmail: roomy, registerPerIp: roomy, verifyPerEmail: roomy, verifyPerIp: roomy };
const SETTINGS: KeyServiceSettings = {
  codeTtlSeconds: 900,
  codeMaxAttempts: 5,
  codePepper: "test-pepper-0123456789abcdef",
  authCacheTtlMs: 60_000,
};

const root = mkdtempSync(join(tmpdir(), "docservice-key-service-"));
const outboxDir = join(root, "outbox");
const mailer = new OutboxMailer(outboxDir, "DocService <no-reply@docservice.test>", logger);
let store: EmbeddedKeyStore;
/** The services' clock, in epoch ms; tests only move it forward. */
let now = Date.now();
const clock = () => now;

before(() => {
  store = new EmbeddedKeyStore(join(root, "keys"));
});

after(async () => {
  await store?.close();
  await mailer.close();
  rmSync(root, { recursive: true, force: true });
});

function service(options: { limits?: Partial<RateSettings>; settings?: Partial<KeyServiceSettings>; on?: EmbeddedKeyStore } = {}) {
  return new KeyService({
    store: options.on ?? store,
    mailer,
    limits: RateLimits.inMemory({ ...ROOMY_LIMITS, ...options.limits }),
    settings: { ...SETTINGS, ...options.settings },
    now: clock,
  });
}

let counter = 0;
/** A fresh address per call, so tests do not share codes, keys or limits. */
function freshEmail(name = "user"): string {
  return `${name}.${++counter}@example.test`;
}

/** Registers the address and returns the code from the .eml file this call wrote to the outbox. */
async function register(keys: KeyService, email: string, clientIp = ""): Promise<string> {
  const before = new Set(readdirSync(outboxDir));
  const response = await keys.register({ email, clientIp });
  assert.equal(response.expiresInSeconds, SETTINGS.codeTtlSeconds);
  const written = readdirSync(outboxDir).filter((name) => !before.has(name));
  assert.equal(written.length, 1, `expected one new mail, got ${written.join(", ")}`);
  assert.match(written[0], /\.eml$/);
  const raw = readFileSync(join(outboxDir, written[0]), "utf8");
  const text = raw.replace(/=\r?\n/g, ""); // quoted-printable soft line breaks
  assert.match(text, new RegExp(`^To: ${email.trim().toLowerCase().replace(/[.+]/g, "\\$&")}$`, "m"));
  const match = /code is (\d{6})/.exec(text);
  assert.ok(match, `no code in mail:\n${raw}`);
  return match[1];
}

/** Register + verify: a new API key for the address. */
async function issueKey(keys: KeyService, email: string): Promise<string> {
  const code = await register(keys, email);
  const { apiKey } = await keys.verify({ email, code, clientIp: "" });
  return apiKey;
}

/** A valid 6-digit code that is not `code`. */
const wrong = (code: string, offset = 1) => String((Number(code) + offset) % 1_000_000).padStart(6, "0");

describe("KeyService: the key life cycle", () => {
  test("register → verify → authenticate → getKeyInfo → revoke → authenticate fails", async () => {
    const keys = service();
    const email = freshEmail("flow");
    const code = await register(keys, `  ${email.toUpperCase()} `);
    assert.match(code, /^\d{6}$/);

    now += 1000;
    const verified = await keys.verify({ email: email.toUpperCase(), code, clientIp: "" });
    const apiKey = verified.apiKey;
    assert.ok(isWellFormedApiKey(apiKey), apiKey);
    const keyId = createHash("sha256").update(apiKey).digest("hex");
    assert.deepEqual(verified.key, {
      keyId,
      displayPrefix: apiKey.slice(0, 10),
      maskedEmail: `${email[0]}${"*".repeat(email.indexOf("@") - 1)}@example.test`,
      createdAt: new Date(now),
    });

    const { principal } = await keys.authenticate({ apiKey });
    assert.deepEqual(principal, { keyId, email, displayPrefix: apiKey.slice(0, 10), createdAt: new Date(now) });

    const info = await keys.getKeyInfo({ apiKey });
    assert.deepEqual(info.key, verified.key);

    assert.deepEqual(await keys.revoke({ apiKey }), { revokedCount: 1 });
    await rejection(keys.authenticate({ apiKey }), "UNAUTHENTICATED");
    await rejection(keys.getKeyInfo({ apiKey }), "UNAUTHENTICATED");
    assert.deepEqual(await keys.revoke({ apiKey }), { revokedCount: 0 });
    assert.equal(await store.findKey(keyId), undefined);
  });

  test("keys are unique per verification and the store never holds the key itself", async () => {
    const keys = service();
    const email = freshEmail();
    const first = await issueKey(keys, email);
    const second = await issueKey(keys, email);
    assert.notEqual(first, second);
    const record = await store.findKey(createHash("sha256").update(first).digest("hex"));
    assert.ok(record);
    assert.ok(!JSON.stringify(record).includes(first.slice(10)));
  });

  test("malformed, unknown and tampered keys are UNAUTHENTICATED", async () => {
    const keys = service();
    const apiKey = await issueKey(keys, freshEmail());
    const flipped = apiKey.slice(0, 10) + (apiKey[10] === "a" ? "b" : "a") + apiKey.slice(11);
    for (const bad of ["", "dsk_", "Bearer " + apiKey, apiKey + "x", flipped, apiKey.toUpperCase()]) {
      await rejection(keys.authenticate({ apiKey: bad }), "UNAUTHENTICATED");
    }
    assert.deepEqual(await keys.revoke({ apiKey: "not-a-key" }), { revokedCount: 0 });
    // A well-formed key nobody issued.
    await rejection(keys.authenticate({ apiKey: generateApiKey() }), "UNAUTHENTICATED");
  });

  test("revoke by address revokes every key of that address only", async () => {
    const keys = service();
    const email = freshEmail();
    const a = await issueKey(keys, email);
    const b = await issueKey(keys, email);
    const other = await issueKey(keys, freshEmail());
    await keys.authenticate({ apiKey: a }); // cached in this instance
    assert.deepEqual(await keys.revoke({ email: ` ${email.toUpperCase()}` }), { revokedCount: 2 });
    await rejection(keys.authenticate({ apiKey: a }), "UNAUTHENTICATED");
    await rejection(keys.authenticate({ apiKey: b }), "UNAUTHENTICATED");
    await keys.authenticate({ apiKey: other });
    assert.deepEqual(await keys.revoke({ email }), { revokedCount: 0 });
  });

  test("revoke with neither target is a VALIDATION_ERROR", async () => {
    const keys = service();
    const error = await rejection(keys.revoke({}), "VALIDATION_ERROR");
    assert.deepEqual(error.details, [{ field: "target", issue: "set apiKey or email" }]);
    const badEmail = await rejection(keys.revoke({ email: "nope" }), "VALIDATION_ERROR");
    assert.deepEqual(badEmail.details?.map((d) => d.field), ["email"]);
  });

  test("health resolves while the store is open", async () => {
    await service().health();
  });
});

describe("KeyService: validation", () => {
  test("verify with a malformed code and a malformed address reports both fields", async () => {
    const keys = service();
    for (const [email, code] of [
      ["not-an-address", "12345"],
      ["a@", "abcdef"],
      ["", "1234567"],
    ]) {
      const error = await rejection(keys.verify({ email, code, clientIp: "" }), "VALIDATION_ERROR");
      assert.deepEqual(error.details?.map((d) => d.field), ["code", "email"], `${email} / ${code}`);
      assert.equal(error.httpStatus, 400);
      assert.match(error.message, /code: .*; email: /);
    }
    const onlyCode = await rejection(keys.verify({ email: freshEmail(), code: "12 456", clientIp: "" }), "VALIDATION_ERROR");
    assert.deepEqual(onlyCode.details?.map((d) => d.field), ["code"]);
    const onlyEmail = await rejection(keys.verify({ email: "x y@z.test", code: "123456", clientIp: "" }), "VALIDATION_ERROR");
    assert.deepEqual(onlyEmail.details?.map((d) => d.field), ["email"]);
  });

  test("register rejects a missing or invalid address and sends nothing", async () => {
    const keys = service();
    const before = readdirSync(outboxDir).length;
    const missing = await rejection(keys.register({ email: "", clientIp: "" }), "VALIDATION_ERROR");
    assert.deepEqual(missing.details, [{ field: "email", issue: "is required" }]);
    const invalid = await rejection(keys.register({ email: "a b@c.d", clientIp: "" }), "VALIDATION_ERROR");
    assert.deepEqual(invalid.details, [{ field: "email", issue: "is not a valid e-mail address" }]);
    assert.equal(readdirSync(outboxDir).length, before);
  });

  test("verify for an address without a code is INVALID_CODE", async () => {
    await rejection(service().verify({ email: freshEmail(), code: "123456", clientIp: "" }), "INVALID_CODE");
  });

  test("absurdly long keys and addresses never reach the store: UNAUTHENTICATED, or a VALIDATION_ERROR naming email", async () => {
    const keys = service();
    for (const length of [10_000, 1_000_000]) {
      const apiKey = `dsk_${"A".repeat(length)}`;
      await rejection(keys.authenticate({ apiKey }), "UNAUTHENTICATED");
      await rejection(keys.getKeyInfo({ apiKey }), "UNAUTHENTICATED");
      assert.deepEqual(await keys.revoke({ apiKey }), { revokedCount: 0 });
      const email = `${"a".repeat(length)}@example.test`;
      for (const call of [keys.register({ email, clientIp: "" }), keys.verify({ email, code: "123456", clientIp: "" }), keys.revoke({ email })]) {
        assert.deepEqual((await rejection(call, "VALIDATION_ERROR")).details, [{ field: "email", issue: "is not a valid e-mail address" }]);
      }
    }
  });
});

describe("KeyService: one-time codes", () => {
  test("a code works until just before 15 minutes and not at 15 minutes", async () => {
    const keys = service();
    const early = freshEmail();
    const earlyCode = await register(keys, early);
    now += 900_000 - 1;
    assert.ok(isWellFormedApiKey((await keys.verify({ email: early, code: earlyCode, clientIp: "" })).apiKey));

    const late = freshEmail();
    const lateCode = await register(keys, late);
    now += 900_000;
    const error = await rejection(keys.verify({ email: late, code: lateCode, clientIp: "" }), "INVALID_CODE");
    assert.equal(error.httpStatus, 401);
    // The expired code is gone, not merely refused.
    assert.equal(await store.recordAttempt(late), undefined);
  });

  test("4 wrong attempts leave the code usable; the 5th kills it", async () => {
    const keys = service();
    const survivor = freshEmail();
    const survivorCode = await register(keys, survivor);
    for (let i = 1; i <= 4; i++) {
      await rejection(keys.verify({ email: survivor, code: wrong(survivorCode, i), clientIp: "" }), "INVALID_CODE");
    }
    assert.ok((await keys.verify({ email: survivor, code: survivorCode, clientIp: "" })).apiKey);

    const victim = freshEmail();
    const victimCode = await register(keys, victim);
    for (let i = 1; i <= 5; i++) {
      await rejection(keys.verify({ email: victim, code: wrong(victimCode, i), clientIp: "" }), "INVALID_CODE");
    }
    await rejection(keys.verify({ email: victim, code: victimCode, clientIp: "" }), "INVALID_CODE");

    // A new registration gives a fresh code with a fresh attempt count.
    const fresh = await register(keys, victim);
    assert.ok((await keys.verify({ email: victim, code: fresh, clientIp: "" })).apiKey);
  });

  test("a code is single-use", async () => {
    const keys = service();
    const email = freshEmail();
    const code = await register(keys, email);
    await keys.verify({ email, code, clientIp: "" });
    await rejection(keys.verify({ email, code, clientIp: "" }), "INVALID_CODE");
  });

  test("two concurrent verifications of one code issue one key", async () => {
    const keys = service();
    const email = freshEmail();
    const code = await register(keys, email);
    const results = await Promise.allSettled([1, 2, 3].map(() => keys.verify({ email, code, clientIp: "" })));
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  });

  test("a new registration replaces the earlier code", async () => {
    const keys = service();
    const email = freshEmail();
    const first = await register(keys, email);
    const second = await register(keys, email);
    if (first !== second) await rejection(keys.verify({ email, code: first, clientIp: "" }), "INVALID_CODE");
    assert.ok((await keys.verify({ email, code: second, clientIp: "" })).apiKey);
  });

  test("a code is bound to its address and to the pepper", async () => {
    const keys = service();
    const owner = freshEmail();
    const ownerCode = await register(keys, owner);
    const other = freshEmail();
    const otherCode = await register(keys, other);
    if (ownerCode !== otherCode) {
      // The owner's code does not work for another address that has a pending code.
      await rejection(keys.verify({ email: other, code: ownerCode, clientIp: "" }), "INVALID_CODE");
    }

    const email = freshEmail();
    const code = await register(keys, email);
    const otherPepper = service({ settings: { codePepper: "another-pepper-0123456789" } });
    await rejection(otherPepper.verify({ email, code, clientIp: "" }), "INVALID_CODE");
  });
});

describe("KeyService: persistence and the authentication cache", () => {
  test("keys survive closing and reopening the store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "docservice-key-store-"));
    try {
      const first = new EmbeddedKeyStore(dir);
      const email = freshEmail();
      const apiKey = await issueKey(service({ on: first }), email);
      await first.close();

      const reopened = new EmbeddedKeyStore(dir);
      try {
        const { principal } = await service({ on: reopened }).authenticate({ apiKey });
        assert.equal(principal?.email, email);
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a key revoked by another instance stays valid in a 60 s cache", async () => {
    const cached = service({ settings: { authCacheTtlMs: 60_000 } });
    const other = service({ settings: { authCacheTtlMs: 0 } });
    const apiKey = await issueKey(other, freshEmail());
    await cached.authenticate({ apiKey });

    assert.deepEqual(await other.revoke({ apiKey }), { revokedCount: 1 });
    await rejection(other.authenticate({ apiKey }), "UNAUTHENTICATED");
    const { principal } = await cached.authenticate({ apiKey });
    assert.ok(principal);
    await cached.getKeyInfo({ apiKey });
  });

  test("a key revoked by another instance stops working once the cache TTL passes", async () => {
    const cached = service({ settings: { authCacheTtlMs: 50 } });
    const other = service({ settings: { authCacheTtlMs: 0 } });
    const apiKey = await issueKey(other, freshEmail());
    await cached.authenticate({ apiKey });
    await other.revoke({ apiKey });
    await cached.authenticate({ apiKey }); // still cached
    await sleep(100);
    await rejection(cached.authenticate({ apiKey }), "UNAUTHENTICATED");
  });

  test("without a cache a revoke through another instance takes effect at once", async () => {
    const uncached = service({ settings: { authCacheTtlMs: 0 } });
    const other = service({ settings: { authCacheTtlMs: 0 } });
    const apiKey = await issueKey(other, freshEmail());
    await uncached.authenticate({ apiKey });
    await other.revoke({ apiKey });
    await rejection(uncached.authenticate({ apiKey }), "UNAUTHENTICATED");
  });

  test("a revoke through the caching instance itself takes effect at once", async () => {
    const cached = service({ settings: { authCacheTtlMs: 60_000 } });
    const apiKey = await issueKey(cached, freshEmail());
    await cached.authenticate({ apiKey });
    await cached.revoke({ apiKey });
    await rejection(cached.authenticate({ apiKey }), "UNAUTHENTICATED");
  });
});

describe("KeyService: rate limits", () => {
  test("the third register for an address within the window is RATE_LIMITED", async () => {
    const keys = service({ limits: { registerPerEmail: { points: 2, seconds: 60 } } });
    const email = freshEmail();
    await register(keys, email);
    await register(keys, email.toUpperCase()); // same address after normalization
    const before = readdirSync(outboxDir).length;
    const error = await rejection(keys.register({ email: ` ${email} `, clientIp: "" }), "RATE_LIMITED");
    assert.ok(error.retryAfterSeconds !== undefined && error.retryAfterSeconds >= 1 && error.retryAfterSeconds <= 60, String(error.retryAfterSeconds));
    assert.equal(error.httpStatus, 429);
    assert.equal(readdirSync(outboxDir).length, before, "no mail for a rate-limited register");
    await register(keys, freshEmail()); // other addresses are not affected
  });

  test("the per-IP limit applies only when clientIp is set", async () => {
    const keys = service({ limits: { registerPerIp: { points: 2, seconds: 60 } } });
    for (let i = 0; i < 4; i++) await register(keys, freshEmail(), "");

    await register(keys, freshEmail(), "203.0.113.7");
    await register(keys, freshEmail(), "203.0.113.7");
    const error = await rejection(keys.register({ email: freshEmail(), clientIp: "203.0.113.7" }), "RATE_LIMITED");
    assert.ok(error.retryAfterSeconds! >= 1 && error.retryAfterSeconds! <= 60);
    await register(keys, freshEmail(), "203.0.113.8");
    await register(keys, freshEmail(), "");
  });

  test("verify is limited per address before the attempt is counted", async () => {
    const keys = service({ limits: { verifyPerEmail: { points: 2, seconds: 60 } } });
    const email = freshEmail();
    const code = await register(keys, email);
    await rejection(keys.verify({ email, code: wrong(code), clientIp: "" }), "INVALID_CODE");
    await rejection(keys.verify({ email, code: wrong(code, 2), clientIp: "" }), "INVALID_CODE");
    const error = await rejection(keys.verify({ email, code, clientIp: "" }), "RATE_LIMITED");
    assert.ok(error.retryAfterSeconds! >= 1 && error.retryAfterSeconds! <= 60);
    // The limited call did not touch the code: 2 attempts recorded so far, this makes 3.
    assert.equal((await store.recordAttempt(email))?.attempts, 3);
  });

  test("verify per-IP limit applies only when clientIp is set", async () => {
    const keys = service({ limits: { verifyPerIp: { points: 1, seconds: 60 } } });
    for (let i = 0; i < 3; i++) await rejection(keys.verify({ email: freshEmail(), code: "000000", clientIp: "" }), "INVALID_CODE");
    await rejection(keys.verify({ email: freshEmail(), code: "000000", clientIp: "198.51.100.1" }), "INVALID_CODE");
    await rejection(keys.verify({ email: freshEmail(), code: "000000", clientIp: "198.51.100.1" }), "RATE_LIMITED");
  });
});
