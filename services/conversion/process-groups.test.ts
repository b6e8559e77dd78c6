import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { reapGroupsIn } from "./process-groups.js";

const KEEP_ALIVE = "setInterval(() => {}, 1000)";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function goneWithin(pid: number, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(50)) if (!alive(pid)) return true;
  return !alive(pid);
}

test("reapGroupsIn kills the groups an earlier run left working in a directory, child processes and all, and no other", async () => {
  const directory = mkdtempSync(join(tmpdir(), "docservice-reap-"));
  const elsewhere = mkdtempSync(join(tmpdir(), "docservice-reap-other-"));
  // a leader naming the directory, whose child does not (a soffice under its unoserver), and a group of another directory
  const spawnChild = `const c = require("node:child_process").spawn(process.execPath, ["-e", ${JSON.stringify(KEEP_ALIVE)}], { stdio: "ignore" }); console.log(c.pid); ${KEEP_ALIVE}`;
  const leader = spawn(process.execPath, ["-e", spawnChild, join(directory, "instance-0/profile")], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  const other = spawn(process.execPath, ["-e", KEEP_ALIVE, elsewhere], { detached: true, stdio: "ignore" });
  try {
    const [line] = (await once(leader.stdout!, "data")) as [Buffer];
    const child = Number(line.toString().trim());
    assert.ok(alive(child));
    assert.equal(reapGroupsIn(directory), 1);
    await once(leader, "exit");
    assert.ok(await goneWithin(child, 2000), "the leader's child went with the group");
    assert.ok(alive(other.pid!), "another directory's group is left alone");
    assert.equal(reapGroupsIn(directory), 0);
  } finally {
    leader.kill("SIGKILL");
    other.kill("SIGKILL");
    rmSync(directory, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  }
});
