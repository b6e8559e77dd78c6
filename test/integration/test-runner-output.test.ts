// npm test's runner gets every result of a test file, even when it reads them late: with
// --test-force-exit a file's process exits once its last result is queued on its stdout, and
// what the runner had not read yet was lost while the run stayed green (nodejs/node#64833).
// scripts/test-child-stdout.ts, which scripts/test.sh preloads, makes that stdout blocking.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";

const PRELOAD = new URL("../../scripts/test-child-stdout.ts", import.meta.url).pathname;
const TESTS = 300;
const dir = mkdtempSync(join(tmpdir(), "docservice-runner-output-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// the file: many tests that finish at once, so its results leave in one burst just before the exit
const file = join(dir, "many.test.mjs");
writeFileSync(file, `import { test } from "node:test";\nfor (let i = 0; i < ${TESTS}; i++) test("t" + i, () => {});\n`);
// in the runner only: blocked for 3 s each time it starts a file's process, as a busy runner is
const stall = join(dir, "stall.cjs");
writeFileSync(
  stall,
  `if (process.env.NODE_TEST_CONTEXT === undefined) require("node:diagnostics_channel").subscribe("child_process", () => setImmediate(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000)));\n`,
);

// a runner of its own, not a file of this one's (which NODE_TEST_CONTEXT would make it)
const { NODE_TEST_CONTEXT: _, ...runnerEnv } = process.env;

async function reportedTests(preloads: string[]): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--require", stall, ...preloads.flatMap((p) => ["--import", p]), "--test", "--test-reporter=tap", "--test-force-exit", file], { cwd: dir, env: runnerEnv });
  return Number(/^# tests (\d+)$/m.exec(stdout)?.[1]);
}

test("with the preload, a runner that reads a file's output late still gets every result", async () => {
  assert.equal(await reportedTests([PRELOAD]), TESTS);
});
