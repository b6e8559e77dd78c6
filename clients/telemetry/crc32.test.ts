import assert from "node:assert/strict";
import { test } from "node:test";
import CRC32 from "crc-32";
import { crc32, crc32Hex } from "./crc32.js";

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

test("CRC-32 known answers (IEEE, as in ZIP and the reference client)", () => {
  assert.equal(crc32Hex(encode("123456789")), "CBF43926");
  assert.equal(crc32Hex(encode("")), "00000000");
  assert.equal(crc32Hex(encode("a")), "E8B7BE43");
  assert.equal(crc32Hex(encode("The quick brown fox jumps over the lazy dog")), "414FA339");
  assert.equal(crc32(encode("123456789")), 0xcbf43926);
});

test("crc32Hex pads to 8 uppercase digits", () => {
  const small = [...Array(4096).keys()].map((n) => new Uint8Array([n & 0xff, n >> 8])).find((bytes) => crc32(bytes) < 0x10000000);
  assert.ok(small, "some two-byte input has a CRC below 0x10000000");
  assert.match(crc32Hex(small), /^0[0-9A-F]{7}$/);
});

test("agrees with the crc-32 package on random buffers", () => {
  for (const length of [1, 7, 64, 1000, 65_536]) {
    const bytes = globalThis.crypto.getRandomValues(new Uint8Array(length));
    assert.equal(crc32(bytes), CRC32.buf(bytes) >>> 0, `length ${length}`);
  }
});
