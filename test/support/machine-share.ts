// Test files share the machine, three at a time (scripts/test.sh), except while
// a load test has it to itself: beside another file, a load test measures that
// file's work as much as the platform's, and its rates cannot be met.
//
// scripts/test.sh loads this module into every test file's process (`node
// --import`): the file marks itself running, once no load test has the
// machine. A load test calls haveMachineAlone(), which stops new files from
// starting and waits for the running ones to end. The marks are files named
// by process ids, so a process that dies holds nothing.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isAlive } from "./process-alive.js";

/** One per machine; its own test sets another, to leave the running suite alone. */
const DIR = process.env.MACHINE_SHARE_DIR ?? join(tmpdir(), "docservice-test-files");
/** Present while a load test has the machine to itself; holds its process id. */
const ALONE = join(DIR, "alone");
const RUNNING = "running-";
/** This process's mark: a test file that runs. */
const MINE = join(DIR, `${RUNNING}${process.pid}`);
const POLL_MS = 500;

function aloneHolder(): number | undefined {
  try {
    const pid = Number(readFileSync(ALONE, "utf8"));
    return pid !== process.pid && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Marks this test file as running, once no load test has the machine. */
export async function takeTurn(): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  for (;;) {
    // mark, then look: a load test that took the machine in between sees the mark and waits for this file
    writeFileSync(MINE, "");
    if (aloneHolder() === undefined) return;
    rmSync(MINE, { force: true });
    await sleep(POLL_MS);
  }
}

/**
 * Runs `wait` (waiting on another test file, as for the machine's one
 * Kubernetes node) with this file not marked running, so that a load test in
 * the file waited on does not wait on this one in turn.
 */
export async function whileWaiting<T>(wait: () => Promise<T>): Promise<T> {
  const wasRunning = existsSync(MINE);
  rmSync(MINE, { force: true });
  try {
    return await wait();
  } finally {
    if (wasRunning) await takeTurn();
  }
}

export interface MachineAlone {
  /** How long the test files running at the call took to end. */
  waitedMs: number;
  /** Lets other test files start again (once; later calls do nothing). */
  release(): void;
}

/**
 * Stops new test files from starting and waits, at most `timeoutMs`, for the
 * others that run to end; then only this process's work runs on the machine
 * (besides what it started) until release().
 */
export async function haveMachineAlone(timeoutMs: number): Promise<MachineAlone> {
  mkdirSync(DIR, { recursive: true });
  const started = Date.now();
  const giveUp = (what: string) => {
    if (Date.now() - started > timeoutMs) throw new Error(`waited ${timeoutMs / 1000} s to have the machine alone: ${what}`);
  };
  for (;;) {
    try {
      writeFileSync(ALONE, String(process.pid), { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = aloneHolder();
      if (holder === undefined) rmSync(ALONE, { force: true });
      else giveUp(`process ${holder} has it`);
      await sleep(POLL_MS);
    }
  }
  const wasRunning = existsSync(MINE);
  rmSync(MINE, { force: true });
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    if (wasRunning) writeFileSync(MINE, "");
    rmSync(ALONE, { force: true });
  };
  try {
    for (;;) {
      const marked = readdirSync(DIR)
        .filter((name) => name.startsWith(RUNNING))
        .map((name) => Number(name.slice(RUNNING.length)));
      for (const pid of marked.filter((pid) => !isAlive(pid))) rmSync(join(DIR, `${RUNNING}${pid}`), { force: true });
      const others = marked.filter(isAlive);
      if (others.length === 0) return { waitedMs: Date.now() - started, release };
      giveUp(`test files still running: processes ${others.join(", ")}`);
      await sleep(POLL_MS);
    }
  } catch (err) {
    release();
    throw err;
  }
}

// Loaded by `node --import` into every process: only a test file (a child of
// the test runner, with the file as its script) takes part.
if (process.env.NODE_TEST_CONTEXT && /\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? "")) {
  await takeTurn();
  process.once("exit", () => rmSync(MINE, { force: true }));
}
