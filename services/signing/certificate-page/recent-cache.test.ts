import assert from "node:assert/strict";
import { test } from "node:test";
import { RecentCache } from "./recent-cache.js";

test("an entry used in every generation stays; one not used for two generations is dropped", () => {
  const cache = new RecentCache<number>(3);
  cache.set("label", 1);
  for (let i = 0; i < 20; i++) {
    assert.equal(cache.get("label"), 1, `after ${i} other entries`);
    cache.set(`value ${i}`, i);
  }
  assert.equal(cache.get("value 0"), undefined);
  assert.equal(cache.get("value 19"), 19);
});

test("stored null and undefined lookups stay apart", () => {
  const cache = new RecentCache<string | null>(2);
  cache.set("invisible", null);
  assert.equal(cache.get("invisible"), null);
  assert.equal(cache.get("never stored"), undefined);
});
