import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { jsonShapeIssue, jsonShapeViolation, MAX_JSON_DEPTH } from "./json-shape.js";

/** `levels` objects nested under key `key`, as JSON.parse makes them (iteratively, so any depth). */
const nestedObjects = (levels: number, key = "a") => JSON.parse(`{"${key}":`.repeat(levels - 1) + "{}" + "}".repeat(levels - 1)) as unknown;
const nestedArrays = (levels: number) => JSON.parse("[".repeat(levels) + "]".repeat(levels)) as unknown;

describe("jsonShapeViolation", () => {
  test("a value 20,000 levels deep, which JSON.stringify cannot take, is refused without throwing", () => {
    for (const deep of [nestedObjects(20_000), nestedArrays(20_000)]) {
      assert.throws(() => JSON.stringify(deep), RangeError);
      const violation = jsonShapeViolation(deep);
      assert.equal(violation?.issue, `is nested deeper than ${MAX_JSON_DEPTH} levels`);
      assert.equal(violation.path.length, MAX_JSON_DEPTH, "the path leads to the first level too many");
    }
  });

  test("the limit is MAX_JSON_DEPTH levels exactly, `{}` being one", () => {
    assert.equal(MAX_JSON_DEPTH, 32);
    assert.equal(jsonShapeViolation(nestedObjects(31)), undefined);
    assert.equal(jsonShapeViolation(nestedObjects(32)), undefined);
    assert.deepEqual(jsonShapeViolation(nestedObjects(33)), { path: Array(32).fill("a"), issue: "is nested deeper than 32 levels" });
    assert.equal(jsonShapeViolation(nestedArrays(32)), undefined);
    assert.deepEqual(jsonShapeViolation(nestedArrays(33))?.path, Array(32).fill(0));
    assert.deepEqual(jsonShapeViolation({ a: 1 }, { maxDepth: 0 }), { path: [], issue: "is nested deeper than 0 levels" });
  });

  test("scalars and shallow values pass; depth counts objects and arrays alike", () => {
    for (const value of [null, 0, "text", true, undefined, {}, [], { a: [1, { b: null }] }]) assert.equal(jsonShapeViolation(value), undefined);
    assert.deepEqual(jsonShapeViolation({ a: [{ b: [] }] }, { maxDepth: 3 })?.path, ["a", 0, "b"]);
  });

  test("names the first offending place in member order, not merely the deepest", () => {
    const value = { shallow: [1, 2], first: { x: nestedArrays(2) }, second: nestedArrays(50) };
    assert.deepEqual(jsonShapeViolation(value, { maxDepth: 3 })?.path, ["first", "x", 0]);
  });

  test("maxMembers counts object members and array items at every level together", () => {
    assert.equal(jsonShapeViolation({ a: [1, 2], b: { c: 3 } }, { maxMembers: 5 }), undefined);
    assert.deepEqual(jsonShapeViolation({ a: [1, 2], b: { c: 3 } }, { maxMembers: 4 }), { path: [], issue: "has more than 4 members (at every level together)" });
    const wide = Array.from({ length: 100_000 }, () => [0]);
    assert.match(jsonShapeViolation(wide, { maxMembers: 1000 })!.issue, /more than 1000 members/);
  });
});

describe("jsonShapeIssue", () => {
  test("writes the place after the field as in the JSON, keys that are not identifiers quoted", () => {
    assert.deepEqual(jsonShapeIssue({ "a b": [[]] }, "auditTrail[3].data", { maxDepth: 2 }), {
      field: 'auditTrail[3].data["a b"][0]',
      issue: "is nested deeper than 2 levels",
    });
    assert.equal(jsonShapeIssue({ a: {} }, "", { maxDepth: 1 })?.field, "a");
    assert.equal(jsonShapeIssue({ a: 1, b: 2 }, "", { maxMembers: 1 })?.field, "body");
    assert.equal(jsonShapeIssue({ a: {} }, "metadata"), undefined);
  });

  test("a path of long keys is cut to 200 characters", () => {
    const issue = jsonShapeIssue(nestedObjects(100, "k".repeat(1000)), "metadata");
    assert.equal(issue?.field.length, 200);
    assert.ok(issue.field.startsWith("metadata.kkk"));
    assert.ok(issue.field.endsWith("…"));
  });
});
