import assert from "node:assert/strict";
import { test } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { TurnBatcher } from "./turn-batcher.js";

function batcher(maxWeight: number, maxWaitMs: number) {
  const handedOver: number[][] = [];
  const batches = new TurnBatcher<number>({ maxWeight, maxWaitMs }, (n) => n, (items) => handedOver.push(items));
  return { batches, handedOver };
}

function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test("the items of one turn are handed over together at the turn's end", async () => {
  const { batches, handedOver } = batcher(1000, 1000);
  [1, 2, 3].forEach((n) => batches.add(n));
  assert.deepEqual(handedOver, []);
  await nextTurn();
  assert.deepEqual(handedOver, [[1, 2, 3]]);
  batches.add(4);
  await nextTurn();
  assert.deepEqual(handedOver, [[1, 2, 3], [4]]);
});

test("a batch that reaches its weight is handed over at once, and the turn goes on with a new one", async () => {
  const { batches, handedOver } = batcher(10, 1000);
  [4, 5, 1, 7, 2].forEach((n) => batches.add(n));
  assert.deepEqual(handedOver, [[4, 5, 1]]);
  await nextTurn();
  assert.deepEqual(handedOver, [[4, 5, 1], [7, 2]]);
});

test("a batch waiting longer than maxWaitMs is handed over with the next item", async () => {
  const { batches, handedOver } = batcher(1000, 5);
  batches.add(1);
  busyFor(6);
  batches.add(2);
  batches.add(3);
  assert.deepEqual(handedOver, [[1, 2]]);
  await nextTurn();
  assert.deepEqual(handedOver, [[1, 2], [3]]);
});

test("nothing is handed over empty", async () => {
  const { batches, handedOver } = batcher(1, 1000);
  batches.add(5);
  await nextTurn();
  await nextTurn();
  assert.deepEqual(handedOver, [[5]]);
});
