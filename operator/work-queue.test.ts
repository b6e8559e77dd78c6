import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { WorkQueue } from "./work-queue.js";

const options = { concurrency: 2, baseRetryMs: 10, maxRetryMs: 40, resyncMs: 0 };

test("a key queued many times before it runs runs once", async () => {
  const handled: string[] = [];
  const queue = new WorkQueue({ ...options, handle: async (key) => void handled.push(key) });
  for (let i = 0; i < 5; i++) queue.add("ns/a");
  queue.add("ns/b");
  await queue.idle();
  assert.deepEqual(handled.sort(), ["ns/a", "ns/b"]);
  queue.stop();
});

test("a key is never handled twice at once; queued while running, it runs again after", async () => {
  let concurrent = 0;
  let maxConcurrent = 0;
  let runs = 0;
  const queue = new WorkQueue({
    ...options,
    handle: async () => {
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      runs++;
      await sleep(20);
      concurrent--;
    },
  });
  queue.add("ns/a");
  await sleep(5);
  queue.add("ns/a");
  queue.add("ns/a");
  await queue.idle();
  assert.equal(maxConcurrent, 1);
  assert.equal(runs, 2);
  queue.stop();
});

test("failures are retried with growing delays, then succeed", async () => {
  const times: number[] = [];
  const delays: number[] = [];
  const queue = new WorkQueue({
    ...options,
    handle: async () => {
      times.push(performance.now());
      if (times.length < 4) throw new Error("not yet");
    },
    onError: (_key, _error, retryInMs) => delays.push(retryInMs),
  });
  queue.add("ns/a");
  await queue.idle();
  assert.equal(times.length, 4);
  assert.deepEqual(delays, [10, 20, 40]);
  assert.ok(times[3] - times[2] >= 35);
  queue.stop();
});

test("the resync re-queues every key seen, until forgotten", async () => {
  const handled: string[] = [];
  const queue = new WorkQueue({ ...options, resyncMs: 25, handle: async (key) => void handled.push(key) });
  queue.add("ns/a");
  queue.add("ns/b");
  await sleep(70);
  assert.ok(handled.filter((k) => k === "ns/a").length >= 2);
  queue.forget("ns/b");
  const before = handled.filter((k) => k === "ns/b").length;
  await sleep(60);
  assert.equal(handled.filter((k) => k === "ns/b").length, before);
  queue.stop();
});
