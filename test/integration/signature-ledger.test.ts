// The eventId ledger of SigningService, both implementations against the same
// contract: LMDB in a temp dir (with an injectable clock) and real Redis.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { open } from "lmdb";
import { setTimeout as sleep } from "node:timers/promises";
import { ServiceError } from "../../services/core/errors.js";
import { createLogger } from "../../services/core/logger.js";
import { connectRedis } from "../../services/core/redis-client.js";
import { EmbeddedSignatureLedger } from "../../services/signing/ledger/embedded-signature-ledger.js";
import { RedisSignatureLedger } from "../../services/signing/ledger/redis-signature-ledger.js";
import type { SignatureLedger } from "../../services/signing/ledger/signature-ledger.js";
import { startRedis, type RedisServer } from "../support/redis.js";

const DOCUMENT = Buffer.from("%PDF-1.7 signed bytes \x00\xff\x80 binary-safe");
const DAY = 24 * 3600 * 1000;

/** The contract; `advance(ms)` moves time forward (a clock for LMDB, real waiting for Redis). */
function contract(ledger: () => SignatureLedger, advance: (ms: number) => Promise<void>, pendingMs: number) {
  test("a first claim wins; the same request while pending is in progress; another request conflicts", async () => {
    const l = ledger();
    assert.deepEqual(await l.claim("key-a", "evt-1", "hash-1", pendingMs), { kind: "claimed" });
    assert.deepEqual(await l.claim("key-a", "evt-1", "hash-1", pendingMs), { kind: "in-progress" });
    assert.deepEqual(await l.claim("key-a", "evt-1", "hash-2", pendingMs), { kind: "conflict" });
    assert.deepEqual(await l.claim("key-b", "evt-1", "hash-2", pendingMs), { kind: "claimed" }, "eventIds are scoped per key");
  });

  test("a completed claim replays the exact bytes; a different request still conflicts", async () => {
    const l = ledger();
    await l.claim("key-a", "evt-2", "hash-1", pendingMs);
    await l.complete("key-a", "evt-2", "hash-1", DOCUMENT, DAY);
    const replay = await l.claim("key-a", "evt-2", "hash-1", pendingMs);
    assert.equal(replay.kind, "replay");
    assert.ok(replay.kind === "replay" && replay.document.equals(DOCUMENT));
    assert.deepEqual(await l.claim("key-a", "evt-2", "hash-9", pendingMs), { kind: "conflict" });
  });

  test("a released claim can be taken again (a failed sign may be retried), but a completed one is not released", async () => {
    const l = ledger();
    await l.claim("key-a", "evt-3", "hash-1", pendingMs);
    await l.release("key-a", "evt-3", "hash-1");
    assert.deepEqual(await l.claim("key-a", "evt-3", "hash-2", pendingMs), { kind: "claimed" });
    await l.complete("key-a", "evt-3", "hash-2", DOCUMENT, DAY);
    await l.release("key-a", "evt-3", "hash-2");
    assert.equal((await l.claim("key-a", "evt-3", "hash-2", pendingMs)).kind, "replay");
  });

  test("a pending claim lapses after its time (a crashed signer does not lock the eventId)", async () => {
    const l = ledger();
    await l.claim("key-a", "evt-4", "hash-1", pendingMs);
    await advance(pendingMs + 50);
    assert.deepEqual(await l.claim("key-a", "evt-4", "hash-2", pendingMs), { kind: "claimed" });
  });
}

describe("EmbeddedSignatureLedger (LMDB)", () => {
  const dir = mkdtempSync(join(tmpdir(), "docservice-ledger-"));
  let now = Date.parse("2026-11-21T00:00:00Z");
  const ledger = new EmbeddedSignatureLedger(dir, () => now);
  after(async () => {
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  contract(() => ledger, async (ms) => void (now += ms), 60_000);

  test("a completed entry expires after its TTL and survives reopening before that", async () => {
    await ledger.claim("key-a", "evt-ttl", "hash-1", 60_000);
    await ledger.complete("key-a", "evt-ttl", "hash-1", DOCUMENT, DAY);
    const reopenedDir = mkdtempSync(join(tmpdir(), "docservice-ledger-reopen-"));
    const first = new EmbeddedSignatureLedger(reopenedDir, () => now);
    await first.claim("k", "e", "h", 60_000);
    await first.complete("k", "e", "h", DOCUMENT, DAY);
    await first.close();
    const second = new EmbeddedSignatureLedger(reopenedDir, () => now);
    assert.equal((await second.claim("k", "e", "h", 60_000)).kind, "replay");
    await second.close();
    rmSync(reopenedDir, { recursive: true, force: true });

    now += DAY + 1;
    assert.deepEqual(await ledger.claim("key-a", "evt-ttl", "hash-2", 60_000), { kind: "claimed" });
  });

  describe("documents are files beside the database", () => {
    const documentsOf = (path: string) => readdirSync(join(path, "documents"));

    test("a signed document is one file of its exact bytes, removed with its expired entry; a partial or unnamed file goes at start", async () => {
      const path = mkdtempSync(join(tmpdir(), "docservice-ledger-files-"));
      let clock = now;
      const first = new EmbeddedSignatureLedger(path, () => clock);
      await first.claim("k", "e", "h", 60_000);
      await first.complete("k", "e", "h", DOCUMENT, DAY);
      const [file, ...others] = documentsOf(path);
      assert.deepEqual(others, []);
      assert.ok(readFileSync(join(path, "documents", file!)).equals(DOCUMENT));
      await first.close();

      writeFileSync(join(path, "documents", `${file}.crashed.partial`), "half a docu");
      writeFileSync(join(path, "documents", "no-entry.pdf"), "%PDF-");
      const second = new EmbeddedSignatureLedger(path, () => clock);
      assert.deepEqual(documentsOf(path), [file]);
      await second.close();

      clock += DAY + 1;
      const third = new EmbeddedSignatureLedger(path, () => clock);
      assert.deepEqual(documentsOf(path), []);
      assert.deepEqual(await third.claim("k", "e", "h", 60_000), { kind: "claimed" });
      await third.close();
      rmSync(path, { recursive: true, force: true });
    });

    test("a document kept inside the database by an earlier version is moved to its file and still replays", async () => {
      const path = mkdtempSync(join(tmpdir(), "docservice-ledger-legacy-"));
      const earlier = open({ path, compression: true });
      await earlier.put("k:e", { hash: "h", document: DOCUMENT, expiresAt: now + DAY });
      await earlier.close();
      const ledger = new EmbeddedSignatureLedger(path, () => now);
      assert.equal(documentsOf(path).length, 1);
      const replay = await ledger.claim("k", "e", "h", 60_000);
      assert.ok(replay.kind === "replay" && replay.document.equals(DOCUMENT));
      await ledger.close();
      rmSync(path, { recursive: true, force: true });
    });

    test("a signed entry whose document file was removed is claimed again, not replayed empty", async () => {
      const path = mkdtempSync(join(tmpdir(), "docservice-ledger-lost-"));
      const ledger = new EmbeddedSignatureLedger(path, () => now);
      await ledger.claim("k", "e", "h", 60_000);
      await ledger.complete("k", "e", "h", DOCUMENT, DAY);
      for (const name of documentsOf(path)) rmSync(join(path, "documents", name));
      assert.deepEqual(await ledger.claim("k", "e", "h", 60_000), { kind: "claimed" });
      await ledger.close();
      rmSync(path, { recursive: true, force: true });
    });
  });
});

describe("RedisSignatureLedger (real Redis)", () => {
  let redis: RedisServer;
  let ledger: RedisSignatureLedger;
  before(async () => {
    redis = await startRedis();
    const client = connectRedis(redis.url, createLogger("silent"));
    ledger = new RedisSignatureLedger(client);
    for (let i = 0; i < 100 && !client.isReady; i++) await sleep(50);
  });
  after(async () => {
    await ledger?.close();
    await redis?.stop();
  });

  contract(() => ledger, (ms) => sleep(ms), 300);

  test("Redis down → 503 UNAVAILABLE, not a hang", async () => {
    await redis.stop();
    try {
      await assert.rejects(ledger.claim("key-a", "evt-down", "hash-1", 300), (error: unknown) => {
        assert.ok(error instanceof ServiceError);
        assert.equal(error.code, "UNAVAILABLE");
        return true;
      });
    } finally {
      await redis.start();
    }
  });
});
