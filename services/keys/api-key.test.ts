import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import CRC32 from "crc-32";
import { isKeyId } from "../access/key-id.js";
import { API_KEY_PREFIX, checksum, displayPrefixOf, generateApiKey, isWellFormedApiKey, keyIdOf } from "./api-key.js";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SHAPE = /^dsk_[0-9A-Za-z]{38}$/;

/** Independent base62 encoding of the unsigned CRC-32, 6 characters, left-padded with '0'. */
function expectedChecksum(body: string): string {
  let n = CRC32.str(body) >>> 0;
  let digits = "";
  while (n > 0) {
    digits = ALPHABET[n % 62] + digits;
    n = Math.floor(n / 62);
  }
  return digits.padStart(6, "0");
}

/** A different base62 character than `c`. */
function other(c: string): string {
  return c === "0" ? "1" : "0";
}

describe("generateApiKey", () => {
  test("keys have the documented shape, are well formed and unique", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const key = generateApiKey();
      assert.match(key, SHAPE);
      assert.ok(key.startsWith(API_KEY_PREFIX));
      assert.equal(key.length, 42);
      assert.ok(isWellFormedApiKey(key), key);
      seen.add(key);
    }
    assert.equal(seen.size, 1000);
  });

  test("the last 6 characters are the base62 CRC-32 of everything before them", () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey();
      assert.equal(key.slice(-6), expectedChecksum(key.slice(0, -6)));
    }
  });

  test("random characters cover the whole alphabet roughly uniformly", () => {
    const counts = new Map<string, number>();
    const keys = 2000;
    for (let i = 0; i < keys; i++) {
      for (const c of generateApiKey().slice(4, 36)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    assert.equal(counts.size, 62, `characters seen: ${[...counts.keys()].sort().join("")}`);
    for (const c of counts.keys()) assert.ok(ALPHABET.includes(c), c);
    const mean = (keys * 32) / 62; // ~1032
    for (const [c, n] of counts) {
      assert.ok(n <= mean * 1.5, `${c} appears ${n} times, mean ${mean.toFixed(0)}`);
      assert.ok(n >= mean * 0.5, `${c} appears ${n} times, mean ${mean.toFixed(0)}`);
    }
  });
});

describe("checksum", () => {
  test("matches an independent CRC-32 + base62 computation for known strings", () => {
    const body = "dsk_0123456789abcdefghijABCDEFGHIJ01";
    const crc = CRC32.str(body) >>> 0;
    let n = crc;
    let manual = "";
    for (let i = 0; i < 6; i++) {
      manual = ALPHABET[n % 62] + manual;
      n = Math.floor(n / 62);
    }
    assert.equal(n, 0, "a 32-bit value fits in 6 base62 digits");
    assert.equal(checksum(body), manual);
    assert.equal(checksum(body), expectedChecksum(body));
    assert.ok(isWellFormedApiKey(body + manual));
  });

  test("is zero-padded to 6 characters for small CRC values", () => {
    // CRC-32 of the empty string is 0.
    assert.equal(CRC32.str("") >>> 0, 0);
    assert.equal(checksum(""), "000000");
    // CRC-32("a") = 0xE8B7BE43: the high bit set checks the unsigned conversion.
    assert.equal(CRC32.str("a") >>> 0, 0xe8b7be43);
    assert.equal(checksum("a"), expectedChecksum("a"));
    assert.equal(checksum("a").length, 6);
  });
});

describe("isWellFormedApiKey", () => {
  test("changing any single character after the prefix is detected", () => {
    for (let round = 0; round < 5; round++) {
      const key = generateApiKey();
      for (let i = API_KEY_PREFIX.length; i < key.length; i++) {
        for (const replacement of [other(key[i]), key[i] === "z" ? "y" : "z", key[i] === "A" ? "B" : "A"]) {
          const changed = key.slice(0, i) + replacement + key.slice(i + 1);
          assert.notEqual(changed, key);
          assert.equal(isWellFormedApiKey(changed), false, `position ${i}: ${changed}`);
        }
      }
    }
  });

  test("wrong prefix, wrong length and bad characters are rejected", () => {
    const key = generateApiKey();
    const body = key.slice(4, 36);
    // Prefix variants with a checksum that matches the altered body, so only the shape can reject them.
    for (const prefix of ["dsx_", "DSK_", "dsk-", "sk_", "dsk__", ""]) {
      const altered = prefix + body;
      assert.equal(isWellFormedApiKey(altered + checksum(altered)), false, prefix);
    }
    assert.equal(isWellFormedApiKey(key.slice(0, -1)), false);
    assert.equal(isWellFormedApiKey(key + "0"), false);
    const shorter = "dsk_" + body.slice(1);
    assert.equal(isWellFormedApiKey(shorter + checksum(shorter)), false);
    const longer = "dsk_" + body + "A";
    assert.equal(isWellFormedApiKey(longer + checksum(longer)), false);
    const withDash = "dsk_" + body.slice(0, 31) + "-";
    assert.equal(isWellFormedApiKey(withDash + checksum(withDash)), false);
    assert.equal(isWellFormedApiKey(` ${key}`), false);
    assert.equal(isWellFormedApiKey(`${key}\n`), false);
    assert.equal(isWellFormedApiKey(""), false);
  });
});

describe("keyIdOf and displayPrefixOf", () => {
  test("keyIdOf is the hex SHA-256 of the key", () => {
    const key = generateApiKey();
    const id = keyIdOf(key);
    assert.match(id, /^[0-9a-f]{64}$/);
    assert.equal(id, createHash("sha256").update(key, "utf8").digest("hex"));
    assert.notEqual(keyIdOf(generateApiKey()), id);
  });

  test("displayPrefixOf is the first 10 characters", () => {
    const key = generateApiKey();
    assert.equal(displayPrefixOf(key), key.slice(0, 10));
    assert.equal(displayPrefixOf(key).length, 10);
    assert.ok(displayPrefixOf(key).startsWith("dsk_"));
  });
});

describe("key ids as requests carry them", () => {
  test("the id of every key has the shape access/key-id.ts checks; a key, a short or upper-case hex string does not", () => {
    for (let i = 0; i < 20; i++) assert.ok(isKeyId(keyIdOf(generateApiKey())));
    const key = generateApiKey();
    for (const text of [key, keyIdOf(key).slice(1), keyIdOf(key).toUpperCase(), ""]) assert.equal(isKeyId(text), false, text);
  });
});
