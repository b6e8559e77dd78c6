import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { withDeadline } from "./deadline.js";

test("withDeadline passes on the value or the error of a promise that settles in time", async () => {
  assert.equal(await withDeadline(Promise.resolve(7), 1000), 7);
  await assert.rejects(withDeadline(Promise.reject(new Error("refused")), 1000), /refused/);
});

test("withDeadline rejects a promise still pending at the deadline, and a later settlement changes nothing", async () => {
  let settle!: (value: string) => void;
  const slow = new Promise<string>((resolve) => (settle = resolve));
  const started = performance.now();
  await assert.rejects(withDeadline(slow, 50), /no answer within 50 ms/);
  assert.ok(performance.now() - started >= 45);
  settle("late");
  await sleep(10);
});
