import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CODE_PATTERN, generateCode, hashCode, hashesEqual } from "./one-time-code.js";

describe("generateCode", () => {
  test("codes are exactly 6 digits, keep leading zeros and vary", () => {
    const seen = new Set<string>();
    let leadingZero = 0;
    for (let i = 0; i < 5000; i++) {
      const code = generateCode();
      assert.match(code, /^\d{6}$/);
      assert.ok(CODE_PATTERN.test(code));
      if (code.startsWith("0")) leadingZero++;
      seen.add(code);
    }
    // ~10% of uniform codes start with 0; P(none in 5000) is negligible.
    assert.ok(leadingZero > 0, "no code with a leading zero in 5000 draws");
    assert.ok(seen.size > 4900, `only ${seen.size} distinct codes in 5000 draws`);
  });

  test("CODE_PATTERN rejects anything but six digits", () => {
    for (const bad of ["", "12345", "1234567", "12345a", " 123456", "123456\n", "１２３４５６"]) {
      assert.equal(CODE_PATTERN.test(bad), false, JSON.stringify(bad));
    }
  });
});

describe("hashCode", () => {
  const pepper = "pepper-0123456789abcdef";

  test("is deterministic and hex", () => {
    const a = hashCode(pepper, "a@example.com", "012345");
    assert.equal(a, hashCode(pepper, "a@example.com", "012345"));
    assert.match(a, /^[0-9a-f]{64}$/);
  });

  test("depends on the pepper, the address and the code", () => {
    const base = hashCode(pepper, "a@example.com", "012345");
    assert.notEqual(hashCode(pepper + "x", "a@example.com", "012345"), base);
    assert.notEqual(hashCode(pepper, "b@example.com", "012345"), base);
    assert.notEqual(hashCode(pepper, "a@example.com", "012346"), base);
    assert.notEqual(hashCode(pepper, "a@example.com", "12345"), base);
  });

  test("the address/code boundary is unambiguous", () => {
    assert.notEqual(hashCode(pepper, "a@b.c1", "23456"), hashCode(pepper, "a@b.c", "123456"));
  });
});

describe("hashesEqual", () => {
  const pepper = "pepper-0123456789abcdef";
  const a = hashCode(pepper, "a@example.com", "000001");
  const b = hashCode(pepper, "a@example.com", "000002");

  test("true for equal hashes, false for different ones", () => {
    assert.equal(hashesEqual(a, a), true);
    assert.equal(hashesEqual(a, String(a)), true);
    assert.equal(hashesEqual(a, b), false);
  });

  test("false (not a throw) for different lengths", () => {
    assert.equal(hashesEqual(a, a.slice(0, 62)), false);
    assert.equal(hashesEqual(a, a + "00"), false);
    assert.equal(hashesEqual(a, ""), false);
    assert.equal(hashesEqual("", a), false);
  });
});
