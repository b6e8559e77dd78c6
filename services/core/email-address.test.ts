import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { maskEmail, normalizeEmail } from "./email-address.js";

describe("normalizeEmail", () => {
  test("trims and lower-cases", () => {
    assert.equal(normalizeEmail("  Jane.Doe@Example.COM \n"), "jane.doe@example.com");
    assert.equal(normalizeEmail("USER@EXAMPLE.ORG"), "user@example.org");
  });

  test("accepts plus-addressing and subdomains", () => {
    assert.equal(normalizeEmail("jane+docs@example.com"), "jane+docs@example.com");
    assert.equal(normalizeEmail("Jane+Tag@Mail.Example.co.uk"), "jane+tag@mail.example.co.uk");
  });

  test("rejects invalid addresses", () => {
    for (const bad of ["", "   ", "a", "a@", "@b.c", "a b@c.d", "a@b c.d", "a@@b.cd", "a@b", "plainaddress", "a@b.c\nd@e.f"]) {
      assert.equal(normalizeEmail(bad), undefined, JSON.stringify(bad));
    }
  });

  test("rejects addresses over 254 characters, accepts shorter valid ones", () => {
    const domain = `${"d".repeat(60)}.${"e".repeat(60)}.${"f".repeat(60)}.com`; // 186 chars
    const atLimit = `${"a".repeat(254 - domain.length - 1)}@${domain}`;
    assert.equal(atLimit.length, 254);
    assert.equal(normalizeEmail(atLimit), atLimit);
    const overLimit = `a${atLimit}`;
    assert.equal(overLimit.length, 255);
    assert.equal(normalizeEmail(overLimit), undefined);
    assert.equal(normalizeEmail(`${"a".repeat(300)}@example.com`), undefined);
  });

  test("the length limit applies after trimming", () => {
    const domain = `${"d".repeat(60)}.${"e".repeat(60)}.${"f".repeat(60)}.com`;
    const atLimit = `${"a".repeat(254 - domain.length - 1)}@${domain}`;
    assert.equal(normalizeEmail(`   ${atLimit}   `), atLimit);
  });
});

describe("maskEmail", () => {
  test("keeps the first character and the domain", () => {
    assert.equal(maskEmail("jane.doe@example.com"), "j*******@example.com");
    assert.equal(maskEmail("bob@example.com"), "b***@example.com");
  });

  test("always masks with at least 3 stars, so short local parts do not reveal their length", () => {
    assert.equal(maskEmail("a@example.com"), "a***@example.com");
    assert.equal(maskEmail("ab@example.com"), "a***@example.com");
    assert.equal(maskEmail("abc@example.com"), "a***@example.com");
    assert.equal(maskEmail("abcde@example.com"), "a****@example.com");
  });

  test("uses the last @ as the separator", () => {
    assert.equal(maskEmail('"a@b"@example.com'), '"****@example.com');
  });
});
