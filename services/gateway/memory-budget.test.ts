import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ServiceError } from "../core/errors.js";
import { MemoryBudget, memoryBudgetBytes } from "./memory-budget.js";

const MB = 1024 * 1024;

describe("MemoryBudget", () => {
  test("a document counts four times its length, a small body its length; what is given back is free again", () => {
    const budget = new MemoryBudget(100 * MB);
    const document = budget.take(20 * MB);
    assert.equal(budget.heldBytes, 80 * MB);
    const small = budget.take(1024);
    assert.equal(budget.heldBytes, 80 * MB + 1024);
    document();
    document(); // giving back twice frees once
    small();
    assert.equal(budget.heldBytes, 0);
  });

  test("a body that would pass the budget is UNAVAILABLE with Retry-After, and nothing is taken", () => {
    const budget = new MemoryBudget(100 * MB);
    budget.take(20 * MB);
    assert.throws(
      () => budget.take(10 * MB),
      (error: unknown) => error instanceof ServiceError && error.code === "UNAVAILABLE" && error.retryAfterSeconds! > 0,
    );
    assert.equal(budget.heldBytes, 80 * MB);
  });

  test("a body larger than the whole budget goes through alone, never beside another", () => {
    const budget = new MemoryBudget(10 * MB);
    const alone = budget.take(20 * MB);
    assert.throws(() => budget.take(1024));
    alone();
    assert.doesNotThrow(() => budget.take(1024));
  });

  test("DOCSERVICE_MEMORY_BUDGET_MB wins; unset, the budget comes from the cgroup or the machine", () => {
    assert.equal(memoryBudgetBytes(300), 300 * MB);
    assert.ok(memoryBudgetBytes(undefined) > 0);
  });
});
