import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "./logger.js";
import { stopAll } from "./shutdown.js";

const logger = createLogger("silent");

test("stops run in order; one that fails does not keep the next from running", async () => {
  const ran: string[] = [];
  const clean = await stopAll(
    [
      async () => void ran.push("gateway"),
      async () => {
        ran.push("store");
        throw new Error("connection lost");
      },
      async () => void ran.push("threads"),
    ],
    1000,
    logger,
  );
  assert.deepEqual(ran, ["gateway", "store", "threads"]);
  assert.equal(clean, true, "all of them finished in time");
});

test("a stop that never ends is left behind at the deadline", async () => {
  const started = performance.now();
  const clean = await stopAll([() => new Promise<void>(() => {})], 200, logger);
  assert.equal(clean, false);
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 190 && elapsed < 1000, `${elapsed} ms`);
});
