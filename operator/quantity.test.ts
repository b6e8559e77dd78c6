import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { quantityValue } from "./quantity.js";

describe("Kubernetes quantities", () => {
  test("binary and decimal suffixes, plain numbers and exponents, exactly", () => {
    for (const [quantity, value] of [
      ["512Mi", 536_870_912n],
      ["2Gi", 2_147_483_648n],
      ["1Ki", 1024n],
      ["1Ti", 2n ** 40n],
      ["1Pi", 2n ** 50n],
      ["8Ei", 2n ** 63n],
      ["500k", 500_000n],
      ["1500M", 1_500_000_000n],
      ["1G", 1_000_000_000n],
      ["2T", 2n * 10n ** 12n],
      ["3P", 3n * 10n ** 15n],
      ["1E", 10n ** 18n],
      ["1e9", 1_000_000_000n],
      ["1E3", 1000n],
      ["25e+2", 2500n],
      ["1073741824", 1_073_741_824n],
      [1_073_741_824, 1_073_741_824n],
      [1e21, 10n ** 21n],
      ["+7", 7n],
      ["0", 0n],
    ] as const) {
      assert.equal(quantityValue(quantity), value, String(quantity));
    }
  });

  test("decimals are exact, and a fraction of a unit rounds up as the API server's Value() does", () => {
    assert.equal(quantityValue("1.5Gi"), 1_610_612_736n);
    assert.equal(quantityValue("0.5Mi"), 524_288n);
    assert.equal(quantityValue(".5Ki"), 512n);
    assert.equal(quantityValue("2.Ki"), 2048n);
    assert.equal(quantityValue("1.1Gi"), 1_181_116_007n); // 1181116006.4
    assert.equal(quantityValue("0.3G"), 300_000_000n); // exact, where 0.3 × 10^9 in floating point is not
    assert.equal(quantityValue("1.5e3"), 1500n);
    assert.equal(quantityValue("1e-3"), 1n);
    assert.equal(quantityValue("100m"), 1n);
    assert.equal(quantityValue("1500m"), 2n);
    assert.equal(quantityValue("-1.5"), -2n);
  });

  test("what is not a quantity is undefined, an absurd exponent too", () => {
    for (const wrong of ["", "Mi", ".", "1.5.1", "512MB", "1 Gi", "1gi", "1Gi ", "0x10", "1e", "2e3Mi", "1e1.5", "NaN", "1e65", "1e99999999", Number.NaN, Infinity]) {
      assert.equal(quantityValue(wrong), undefined, String(wrong));
    }
  });
});
