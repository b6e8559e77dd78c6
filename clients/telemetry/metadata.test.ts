import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { asJson, boundMetadata, MAX_LISTED_DROPS, METADATA_LIMITS, type JsonValue } from "./metadata.js";

/** Levels of objects and arrays, the value itself the first. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/** Keys of all objects below the value, array elements included. */
function keysOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  return Object.values(value).reduce((sum: number, item) => sum + 1 + keysOf(item), 0);
}

/** Whether every part of `kept` is in `sent` at the same place (arrays: in the same order). */
function isPartOf(kept: unknown, sent: unknown): boolean {
  if (kept === null || typeof kept !== "object") return Object.is(kept, sent);
  if (sent === null || typeof sent !== "object" || Array.isArray(kept) !== Array.isArray(sent)) return false;
  if (Array.isArray(kept)) {
    let at = 0;
    return kept.every((item) => {
      while (at < (sent as unknown[]).length && !isPartOf(item, (sent as unknown[])[at])) at++;
      return at++ < (sent as unknown[]).length;
    });
  }
  return Object.entries(kept).every(([key, item]) => Object.hasOwn(sent, key) && isPartOf(item, (sent as Record<string, unknown>)[key]));
}

const anyMetadata = fc.dictionary(fc.string({ maxLength: 80 }), fc.jsonValue({ maxDepth: 7 }), { maxKeys: 90 });

describe("boundMetadata", () => {
  test("whatever is sent, what is kept is within every limit, and is part of what was sent", () => {
    fc.assert(
      fc.property(anyMetadata, (sent) => {
        const { metadata, dropped } = boundMetadata(sent);
        if (metadata === undefined) return;
        assert.ok(new TextEncoder().encode(JSON.stringify(metadata)).length <= METADATA_LIMITS.maxBytes, "bytes");
        assert.ok(depthOf(metadata) <= METADATA_LIMITS.maxDepth, "depth");
        assert.ok(keysOf(metadata) <= METADATA_LIMITS.maxKeys, "keys");
        assert.ok(isPartOf(metadata, sent), "part of what was sent");
        assert.ok(dropped.length <= MAX_LISTED_DROPS);
      }),
      { numRuns: 500 },
    );
  });

  test("metadata within the limits is kept whole, nothing dropped", () => {
    const within = fc
      .dictionary(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 })
      .filter((m) => keysOf(m) <= METADATA_LIMITS.maxKeys && new TextEncoder().encode(JSON.stringify(m)).length <= METADATA_LIMITS.maxBytes);
    fc.assert(
      fc.property(within, (sent) => {
        const { metadata, dropped } = boundMetadata(JSON.parse(JSON.stringify(sent)));
        assert.deepEqual(dropped, []);
        assert.deepEqual(metadata, keysOf(sent) === 0 ? undefined : JSON.parse(JSON.stringify(sent)));
      }),
      { numRuns: 300 },
    );
  });

  test("each limit, exactly at it and one past it", () => {
    const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;
    const filler = (bytes: number) => ({ pad: "é".repeat((bytes - bytesOf({ pad: "" })) / 2) });
    assert.equal(bytesOf(filler(METADATA_LIMITS.maxBytes)), METADATA_LIMITS.maxBytes);
    assert.deepEqual(boundMetadata(filler(METADATA_LIMITS.maxBytes)).dropped, []);
    assert.deepEqual(boundMetadata(filler(METADATA_LIMITS.maxBytes + 2)).dropped, [{ path: "metadata.pad", reason: "too large" }]);

    const nested = (levels: number): JsonValue => (levels === 1 ? {} : { n: nested(levels - 1) });
    assert.deepEqual(boundMetadata(nested(METADATA_LIMITS.maxDepth)).dropped, []);
    assert.deepEqual(boundMetadata(nested(METADATA_LIMITS.maxDepth + 1)).dropped, [{ path: `metadata${".n".repeat(METADATA_LIMITS.maxDepth)}`, reason: "too deep" }]);

    const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));
    assert.deepEqual(boundMetadata(keys(METADATA_LIMITS.maxKeys)).dropped, []);
    assert.deepEqual(boundMetadata(keys(METADATA_LIMITS.maxKeys + 1)).dropped, [{ path: `metadata.k${METADATA_LIMITS.maxKeys}`, reason: "too many keys" }]);

    const long = "k".repeat(METADATA_LIMITS.maxKeyChars);
    assert.deepEqual(boundMetadata({ [long]: 1, [`${long}x`]: 2 }), { metadata: { [long]: 1 }, dropped: [{ path: `metadata.${long}x`, reason: "key too long" }] });
  });

  test("a __proto__ key is kept as the key it is, never as the kept object's prototype", () => {
    const sent = JSON.parse('{"__proto__":{"polluted":true},"ctx":{"__proto__":{"x":1}}}');
    const { metadata } = boundMetadata(sent);
    assert.equal(Object.getPrototypeOf(metadata), Object.prototype);
    assert.equal(Object.getPrototypeOf(metadata!.ctx), Object.prototype);
    assert.equal(JSON.stringify(metadata), '{"__proto__":{"polluted":true},"ctx":{"__proto__":{"x":1}}}');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test("an entry too large is left out whole and later, smaller ones still fit; a strange key is quoted in its path", () => {
    const { metadata, dropped } = boundMetadata({ tenant: "t1", huge: "x".repeat(5000), "user id": "u1", "a.b": { c: 1 } });
    assert.deepEqual(metadata, { tenant: "t1", "user id": "u1", "a.b": { c: 1 } });
    assert.deepEqual(dropped, [{ path: "metadata.huge", reason: "too large" }]);
    assert.deepEqual(boundMetadata({ "a.b": { c: { d: { e: {} } } } }).dropped, [{ path: 'metadata["a.b"].c.d.e', reason: "too deep" }]);
  });

  test("no metadata, null, or anything but an object: nothing kept, and only a non-object is named", () => {
    assert.deepEqual(boundMetadata(undefined), { metadata: undefined, dropped: [] });
    assert.deepEqual(boundMetadata(null), { metadata: undefined, dropped: [] });
    assert.deepEqual(boundMetadata({}), { metadata: undefined, dropped: [] });
    for (const value of ["t1", 1, [1], true]) assert.deepEqual(boundMetadata(value), { metadata: undefined, dropped: [{ path: "metadata", reason: "not an object" }] });
  });

  test("a hostile metadata of 100,000 keys and 100,000 levels is bounded without recursing past the limit, and lists at most 16 drops", () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, { deep }]));
    const { metadata, dropped } = boundMetadata(wide);
    assert.ok(keysOf(metadata) <= METADATA_LIMITS.maxKeys);
    assert.equal(dropped.length, MAX_LISTED_DROPS);
  });
});

describe("asJson", () => {
  test("what JSON would send: toJSON applied, undefined and functions left out, a cycle or a BigInt left out alone", () => {
    const cycle: Record<string, unknown> = { name: "c" };
    cycle.self = cycle;
    const { json, dropped } = asJson({ at: new Date("2026-01-02T03:04:05.000Z"), gone: undefined, fn: () => 1, cycle, big: 10n, ok: { nan: Number.NaN } });
    assert.deepEqual(json, { at: "2026-01-02T03:04:05.000Z", ok: { nan: null } });
    assert.deepEqual(dropped, [
      { path: "metadata.gone", reason: "not JSON" },
      { path: "metadata.fn", reason: "not JSON" },
      { path: "metadata.cycle", reason: "not JSON" },
      { path: "metadata.big", reason: "not JSON" },
    ]);
  });
});
