import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { ServiceError } from "../../core/errors.js";
import { Spool } from "./spool.js";
import { spooledRecord } from "./test/spooled-record.js";

/** Nothing known about the log: the position of a write before Kafka ever answered. */
const NOWHERE = {};

const root = mkdtempSync(join(tmpdir(), "docservice-spool-"));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, String(++dirs));

const record = spooledRecord;

async function drain(spool: Spool): Promise<string[]> {
  const ids: string[] = [];
  for (let segment = await spool.oldest(); segment; segment = await spool.oldest()) {
    ids.push(...segment.records.map((r) => r.eventId));
    await segment.remove();
  }
  return ids;
}

describe("Spool", () => {
  test("records come back oldest first, each once, and the spool is empty after", async () => {
    const spool = Spool.open(freshDir(), { maxBytes: 1 << 20 });
    await spool.append([record(1), record(2)], NOWHERE);
    await spool.append([record(3)], NOWHERE);
    assert.equal(spool.isEmpty, false);
    const first = await drain(spool);
    await spool.append([record(4)], NOWHERE);
    assert.deepEqual([...first, ...(await drain(spool))], ["event-1", "event-2", "event-3", "event-4"]);
    assert.equal(spool.isEmpty, true);
    assert.equal(spool.bytes, 0);
    await spool.close();
  });

  test("concurrent appends all land (one write and fsync for the lot) and keep their order", async () => {
    const spool = Spool.open(freshDir(), { maxBytes: 1 << 20 });
    await Promise.all(Array.from({ length: 200 }, (_, i) => spool.append([record(i)], NOWHERE)));
    const ids = await drain(spool);
    assert.deepEqual(ids, Array.from({ length: 200 }, (_, i) => `event-${i}`));
    await spool.close();
  });

  test("what was appended survives reopening (a restart), a torn last line is skipped", async () => {
    const dir = freshDir();
    const first = Spool.open(dir, { maxBytes: 1 << 20 });
    await first.append([record(1), record(2)], NOWHERE);
    await first.close();
    const [segment] = readdirSync(dir);
    appendFileSync(join(dir, segment), '{"eventId":"torn'); // a crash in the middle of a write
    const reopened = Spool.open(dir, { maxBytes: 1 << 20 });
    assert.equal(reopened.isEmpty, false);
    await reopened.append([record(3)], NOWHERE);
    assert.deepEqual(await drain(reopened), ["event-1", "event-2", "event-3"]);
    assert.deepEqual(readdirSync(dir), []);
    await reopened.close();
  });

  test("a segment keeps the earliest log position of its appends; a segment without one (an older version's) knows nothing", async () => {
    const dir = freshDir();
    const spool = Spool.open(dir, { maxBytes: 1 << 20 });
    await spool.append([record(1)], { 0: 100, 1: 50 });
    await spool.append([record(2)], { 0: 90, 1: 70, 2: 5 });
    await spool.append([record(3)], { 0: 120, 1: 60 });
    const segment = await spool.oldest();
    assert.deepEqual(segment?.since, { 0: 90, 1: 50 }, "per partition the lowest; a partition not known to every append is unknown");
    assert.deepEqual(segment?.records.map((r) => r.eventId), ["event-1", "event-2", "event-3"]);
    await segment?.remove();
    await spool.append([record(4)], { 0: 200 });
    assert.deepEqual((await spool.oldest())?.since, { 0: 200 }, "a new segment starts from its own first append");
    await spool.close();

    const old = join(freshDir(), "000000000001.jsonl");
    const legacyDir = join(old, "..");
    Spool.open(legacyDir, { maxBytes: 1 << 20 });
    appendFileSync(old, `${JSON.stringify(record(5))}\n`);
    const legacy = Spool.open(legacyDir, { maxBytes: 1 << 20 });
    const legacySegment = await legacy.oldest();
    assert.deepEqual([legacySegment?.since, legacySegment?.records.length], [{}, 1]);
    await legacy.close();
  });

  test("a full spool refuses with 503 and Retry-After, and accepts again once delivered", async () => {
    const spool = Spool.open(freshDir(), { maxBytes: 1000 });
    await spool.append([record(1), record(2)], NOWHERE);
    await assert.rejects(spool.append([record(3), record(4), record(5)], NOWHERE), (error: unknown) => {
      assert.ok(error instanceof ServiceError);
      assert.equal(error.code, "UNAVAILABLE");
      assert.ok((error.retryAfterSeconds ?? 0) > 0);
      return true;
    });
    await drain(spool);
    await spool.append([record(3)], NOWHERE);
    assert.deepEqual(await drain(spool), ["event-3"]);
    await spool.close();
  });
});
