import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { startTypeScriptWorker, workerModuleUrl } from "./typescript-worker.js";

test("a worker module is the .ts source next to a .ts caller and the .js file next to a compiled one", () => {
  assert.equal(workerModuleUrl("./signing-worker.js", "file:///repo/services/signing/signing-workers.ts").href, "file:///repo/services/signing/signing-worker.ts");
  assert.equal(workerModuleUrl("./signing-worker.js", "file:///app/dist/services/signing/signing-workers.js").href, "file:///app/dist/services/signing/signing-worker.js");
  assert.equal(workerModuleUrl("../core/x.js", "file:///app/dist/services/signing/a.js").href, "file:///app/dist/services/core/x.js");
  assert.throws(() => workerModuleUrl("./signing-worker.ts", "file:///repo/a.ts"), /relative \.js specifier/);
  assert.throws(() => workerModuleUrl("some-package", "file:///repo/a.ts"), /relative \.js specifier/);
});

async function echo(specifier: string, parentUrl: string, data: unknown, youngGenerationMb?: number): Promise<unknown> {
  const worker = startTypeScriptWorker(specifier, parentUrl, data, youngGenerationMb ? { maxYoungGenerationSizeMb: youngGenerationMb } : undefined);
  try {
    return await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`worker exited with ${code}`)));
    });
  } finally {
    await worker.terminate();
  }
}

const ECHO = `import { parentPort, resourceLimits, workerData } from "node:worker_threads";
const data: { n: number } = workerData.data;
parentPort!.postMessage({ n: data.n + 1, module: import.meta.url, youngGenerationMb: resourceLimits.maxYoungGenerationSizeMb });
`;

test("a compiled caller's worker loads its .js module directly; a .ts caller's gets tsx; both get their heap limits", async () => {
  const dir = mkdtempSync(join(tmpdir(), "typescript-worker-"));
  try {
    writeFileSync(join(dir, "package.json"), '{"type": "module"}');
    // Plain JavaScript (what tsc emits): no tsx in this thread, so a .ts file could not load.
    writeFileSync(join(dir, "echo.js"), ECHO.replace(": { n: number }", "").replace("parentPort!", "parentPort"));
    writeFileSync(join(dir, "echo.ts"), ECHO);
    const parent = (name: string) => pathToFileURL(join(dir, name)).href;
    assert.deepEqual(await echo("./echo.js", parent("caller.js"), { n: 1 }, 16), { n: 2, module: parent("echo.js"), youngGenerationMb: 16 });
    assert.deepEqual(await echo("./echo.js", parent("caller.ts"), { n: 41 }, 12), { n: 42, module: parent("echo.ts"), youngGenerationMb: 12 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
