// Processes that take turns as test files and as a load test would, on a
// directory of their own (the suite's running files use the machine's).
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

const MODULE = new URL("./machine-share.ts", import.meta.url).href;
const dir = mkdtempSync(join(tmpdir(), "docservice-machine-share-"));
after(() => rmSync(dir, { recursive: true, force: true }));
/** The processes a test started: a failed test leaves some waiting, which would keep the file from ending. */
const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

/** What a role prints, once it has its turn; it holds it until its stdin ends. */
const ROLES = {
  file: `await share.takeTurn(); console.log("running"); await hold(); process.exit(0);`,
  waiter: `await share.takeTurn(); await share.whileWaiting(async () => { console.log("waiting"); await hold(); }); console.log("running again");`,
  load: `const alone = await share.haveMachineAlone(60_000); console.log("alone"); await hold(); alone.release(); console.log("released");`,
};

interface Role {
  child: ChildProcess;
  said: string[];
  /** Resolves once the role prints `line`; fails if it has not within `withinMs`. */
  saying(line: string, withinMs?: number): Promise<void>;
}

function start(role: keyof typeof ROLES): Role {
  const hold = `const hold = () => new Promise((resolve) => { process.stdin.resume(); process.stdin.once("end", resolve); });`;
  // a file takes its turn as scripts/test.sh's --import would make it do at its start
  const code = `const share = await import(${JSON.stringify(MODULE)}); ${hold} ${ROLES[role]}`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    env: { ...process.env, MACHINE_SHARE_DIR: dir },
    stdio: ["pipe", "pipe", "inherit"],
  });
  started.push(child);
  const said: string[] = [];
  const waiters: Array<() => void> = [];
  child.stdout!.setEncoding("utf8").on("data", (text: string) => {
    said.push(...text.split("\n").filter(Boolean));
    for (const wake of waiters.splice(0)) wake();
  });
  const saying = async (line: string, withinMs = 15_000) => {
    const until = Date.now() + withinMs;
    while (!said.includes(line)) {
      if (child.exitCode !== null) throw new Error(`${role} exited with ${child.exitCode} before saying "${line}"`);
      if (Date.now() > until) throw new Error(`${role} did not say "${line}" within ${withinMs} ms`);
      await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), sleep(100)]);
    }
  };
  return { child, said, saying };
}

const end = (role: Role) => role.child.stdin!.end();
/** Whether `role` says `line` within `ms`. */
const saysWithin = (role: Role, line: string, ms: number) => role.saying(line, ms).then(() => true, () => false);

describe("test files share the machine, and a load test has it alone", () => {
  test("a load test waits for the files running, and files that start meanwhile wait for the load test", async () => {
    const first = start("file");
    await first.saying("running");
    const load = start("load");
    assert.equal(await saysWithin(load, "alone", 1500), false, "the load test waits while a file runs");
    const second = start("file");
    assert.equal(await saysWithin(second, "running", 1500), false, "a file does not start once a load test waits for the machine");
    end(first);
    await load.saying("alone");
    assert.equal(await saysWithin(second, "running", 1000), false, "nor while the load test runs");
    end(load);
    await load.saying("released");
    await second.saying("running");
    end(second);
  });

  test("a process that dies holds nothing: a killed file, a killed load test", async () => {
    const file = start("file");
    await file.saying("running");
    const load = start("load");
    assert.equal(await saysWithin(load, "alone", 1000), false);
    file.child.kill("SIGKILL");
    await load.saying("alone");
    load.child.kill("SIGKILL");
    const next = start("file");
    await next.saying("running");
    end(next);
  });

  test("a file waiting on another (for the Kubernetes node) does not hold a load test back, and takes its turn again after it", async () => {
    const waiter = start("waiter");
    await waiter.saying("waiting");
    const load = start("load");
    await load.saying("alone");
    end(waiter);
    assert.equal(await saysWithin(waiter, "running again", 1000), false, "its wait is over, but the load test has the machine");
    end(load);
    await waiter.saying("running again");
  });
});
