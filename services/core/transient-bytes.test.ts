// A minor collection after every 8 MB of bodies passed through the thread, none before.
import assert from "node:assert/strict";
import { PerformanceObserver, constants } from "node:perf_hooks";
import { test } from "node:test";
import { passedThrough } from "./transient-bytes.js";

const MB = 1024 * 1024;

/** Forced minor collections while `work` runs (the observer reports them on the next turns); V8's own are not forced. */
async function minorCollectionsDuring(work: () => void): Promise<number> {
  let minor = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { kind, flags } = (entry as unknown as { detail: { kind: number; flags: number } }).detail;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR && flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) minor++;
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  work();
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return minor;
}

test("bodies under 8 MB in all collect nothing; the byte that makes 8 MB collects the young generation once", async () => {
  assert.equal(await minorCollectionsDuring(() => {
    for (let i = 0; i < 7; i++) passedThrough(MB);
    passedThrough(MB - 1);
  }), 0);
  assert.equal(await minorCollectionsDuring(() => passedThrough(1)), 1);
  assert.equal(await minorCollectionsDuring(() => passedThrough(4 * MB)), 0);
  assert.equal(await minorCollectionsDuring(() => {
    for (let i = 0; i < 16; i++) passedThrough(MB);
  }), 2);
});

test("gc is not left exposed to other code", { skip: process.execArgv.includes("--expose-gc") && "started with gc exposed" }, () => {
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, "undefined");
});
