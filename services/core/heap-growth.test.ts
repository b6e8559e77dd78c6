import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const MODULE = fileURLToPath(new URL("./heap-growth.ts", import.meta.url));

/** The growing factor V8 reports after a mark-compact in a fresh process that called fixHeapGrowingFactor(). */
function factorAfterFix(nodeArgs: string[]): string {
  const script = `
    const { fixHeapGrowingFactor } = await import(${JSON.stringify(MODULE)});
    const { setFlagsFromString } = await import("node:v8");
    fixHeapGrowingFactor();
    setFlagsFromString("--trace-gc-verbose");
    globalThis.gc();`;
  const output = execFileSync(process.execPath, [...nodeArgs, "--expose-gc", "--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
  const factor = /\[HeapController\] factor ([\d.]+)/.exec(output);
  assert.ok(factor, `V8 printed no growing factor:\n${output.slice(0, 2000)}`);
  return factor[1];
}

test("the heap growing factor is fixed at 3", () => {
  assert.equal(factorAfterFix([]), "3.0");
});

test("a growing factor given on the command line is kept", () => {
  assert.equal(factorAfterFix(["--heap-growing-percent=50"]), "1.5");
});
