import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { LibreOfficePool, type PoolSettings } from "../../services/conversion/libreoffice-pool.js";
import { childrenOf } from "../../services/conversion/process-memory.js";
import { formatByName } from "../../services/conversion/source-format.js";
import { ServiceError } from "../../services/core/errors.js";
import { createLogger } from "../../services/core/logger.js";
import { cacheBin } from "../support/cache.js";
import { makeDocx, slowDocx } from "../support/docx-fixtures.js";
import { waitFor } from "../support/wait.js";
import { corpusFile } from "../support/corpus.js";

const docx = formatByName("docx")!;
const small = corpusFile("1-page.docx");
const isPdf = (bytes: Buffer) => bytes.subarray(0, 5).toString() === "%PDF-";

/** The pid of the first process named `name` below `root`, from /proc. */
function descendantNamed(root: number, name: string): number {
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.shift()!;
    if (pid !== root && readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name) return pid;
    pending.push(...childrenOf(pid));
  }
  throw new Error(`no ${name} below ${root}`);
}

// The local pool against real LibreOffice, driven through unoserver.
describe("LibreOffice pool", () => {
  const directories: string[] = [];
  const pools: LibreOfficePool[] = [];

  async function startPool(settings: Partial<PoolSettings> = {}): Promise<LibreOfficePool> {
    const directory = mkdtempSync(join(tmpdir(), "docservice-pool-"));
    directories.push(directory);
    const pool = new LibreOfficePool({
      size: 2,
      unoserverBin: cacheBin("unoserver"),
      directory,
      timeoutMs: 60_000,
      queueLimit: 16,
      memoryLimitBytes: 2 ** 31,
      startTimeoutMs: 60_000,
      logger: createLogger("silent"),
      ...settings,
    });
    pools.push(pool);
    await pool.start();
    return pool;
  }

  let shared: LibreOfficePool;
  before(async () => {
    shared = await startPool();
  });

  after(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  });

  test("N concurrent conversions use every instance", async () => {
    const before = shared.stats().map((s) => s.conversions);
    const pdfs = await Promise.all(Array.from({ length: 6 }, () => shared.convert(small, docx)));
    assert.ok(pdfs.every(isPdf));
    const done = shared.stats().map((s, i) => s.conversions - before[i]);
    assert.equal(done.reduce((a, b) => a + b, 0), 6);
    assert.ok(done.every((n) => n >= 1), `conversions per instance: ${done}`);
  });

  test("a document that hangs past the timeout is killed; the next conversion succeeds", async () => {
    // the timeout also bounds the next conversion, the first of a new instance: on a slow, busy machine that took over 1 s
    const timeoutMs = 3000;
    const pool = await startPool({ size: 1, timeoutMs });
    const pid = pool.stats()[0].pid;
    const started = Date.now();
    await assert.rejects(pool.convert(slowDocx(), docx), (error: ServiceError) => error.code === "TIMEOUT" && error.httpStatus === 504);
    assert.ok(Date.now() - started < timeoutMs + 4000, "the timeout fired on time");
    assert.ok(isPdf(await pool.convert(small, docx)));
    assert.notEqual(pool.stats()[0].pid, pid, "the instance was restarted");
  });

  test("a frozen instance does not delay conversions queued on the others", async () => {
    const pool = await startPool({ size: 2, timeoutMs: 20_000 });
    const stuck = pool.convert(slowDocx(), docx).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    for (let i = 0; i < 3; i++) assert.ok(isPdf(await pool.convert(small, docx)));
    assert.ok(Date.now() - started < 5000, `small conversions waited ${Date.now() - started} ms behind the slow one`);
    await stuck;
  });

  test("an instance killed mid-conversion is restarted and the job completes", async () => {
    const pool = await startPool({ size: 2 });
    const job = pool.convert(slowDocx(8000), docx);
    let victim: number | undefined;
    await waitFor(async () => {
      victim = pool.stats().find((s) => s.state === "busy")?.pid;
      return victim !== undefined;
    }, { what: "a busy instance" });
    process.kill(-victim!, "SIGKILL");
    assert.ok(isPdf(await job), "the job was retried on a live instance");
    await waitFor(async () => pool.stats().every((s) => s.state === "idle" && s.pid !== undefined && s.pid !== victim), {
      what: "the killed instance to come back",
      timeoutMs: 90_000,
    });
    assert.ok(isPdf(await pool.convert(small, docx)));
  });

  test("a full queue answers 503 with Retry-After", async () => {
    const pool = await startPool({ size: 1, queueLimit: 1 });
    const running = pool.convert(slowDocx(4000), docx);
    const queued = pool.convert(small, docx);
    await assert.rejects(pool.convert(small, docx), (error: ServiceError) => error.code === "UNAVAILABLE" && (error.retryAfterSeconds ?? 0) > 0);
    assert.ok(isPdf(await running));
    assert.ok(isPdf(await queued));
  });

  test("an instance over its memory limit is recycled after its conversion", async () => {
    const pool = await startPool({ size: 1, memoryLimitBytes: 1 });
    const pid = pool.stats()[0].pid;
    assert.ok(isPdf(await pool.convert(small, docx)));
    await waitFor(async () => pool.stats()[0].state === "idle" && pool.stats()[0].pid !== pid, { what: "the recycled instance", timeoutMs: 90_000 });
  });

  test("LibreOffice dying under a live unoserver fails neither its job nor the ones after it", async () => {
    const pool = await startPool({ size: 2 });
    const job = pool.convert(slowDocx(8000), docx);
    let busy: number | undefined;
    await waitFor(async () => (busy = pool.stats().find((s) => s.state === "busy")?.pid) !== undefined, { what: "a busy instance" });
    // unoserver outlives its soffice for a moment and answers convert() with faults meanwhile.
    process.kill(descendantNamed(busy!, "soffice.bin"), "SIGKILL");
    const after = await Promise.all(Array.from({ length: 4 }, () => pool.convert(small, docx)));
    assert.ok(after.every(isPdf), "documents sent right after the crash convert");
    assert.ok(isPdf(await job), "the interrupted job is finished by the cold fallback");
    await waitFor(async () => pool.stats().every((s) => s.state === "idle" && s.pid !== busy), { what: "the broken instance replaced", timeoutMs: 90_000 });
  });

  test("a document LibreOffice cannot read is a 422, and the instance stays in service", async () => {
    const pid = shared.stats().map((s) => s.pid);
    const notWord = makeDocx(["x"]).subarray(0, 60);
    await assert.rejects(shared.convert(notWord, docx), (error: ServiceError) => error.code === "UNPROCESSABLE_DOCUMENT");
    assert.deepEqual(shared.stats().map((s) => s.pid), pid);
  });
});
