import assert from "node:assert/strict";
import { test } from "node:test";
import { SignatureLatency } from "./signature-latency.js";

const after = (samples: number[]) => {
  const latency = new SignatureLatency();
  const modes = samples.map((ms) => (latency.record(ms), latency.synchronous));
  return modes;
};

test("a fast token is asked synchronously, whatever an odd slow signature does", () => {
  assert.equal(new SignatureLatency().synchronous, true);
  const modes = after([1.2, 1.1, 1.3, 9, 1.2, 1.1]);
  assert.deepEqual(modes, [true, true, true, true, true, true]);
});

test("a slow token goes to the thread pool from its first signature", () => {
  assert.deepEqual(after([30, 28, 31]), [false, false, false]);
});

test("a token that becomes slow goes to the pool, and back once it is fast again, without flapping in between", () => {
  const modes = after([1, 1, 20, 20, 20, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5]);
  const firstSlow = modes.indexOf(false);
  assert.ok(firstSlow >= 2 && firstSlow <= 4, `went to the pool at ${firstSlow}`);
  // 4 ms is between the two thresholds: it stays where it is
  assert.ok(modes.slice(firstSlow, 15).every((mode) => !mode), modes.join());
  assert.equal(modes.at(-1), true);
});
