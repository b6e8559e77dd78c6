import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AnnotationField, type AnnotateRequest } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { ServiceError, type FieldIssue } from "../core/errors.js";
import { fieldIssues } from "../core/field-issues.js";
import { checkAnnotateFields } from "./annotate-request-check.js";
import { ANNOTATE_LIMITS, annotateSchema } from "./annotate-request-schema.js";

const field = (f: Partial<AnnotationField>): AnnotationField => ({ ...AnnotationField.fromPartial({}), ...f });
const request = (fields: AnnotationField[]): AnnotateRequest => ({ document: { content: Buffer.from("not read") }, fields, toPdf: false });

/** The issues the message check names, or [] when it passes. */
function messageIssues(fields: AnnotationField[]): FieldIssue[] {
  try {
    checkAnnotateFields(request(fields));
    return [];
  } catch (error) {
    assert.ok(error instanceof ServiceError && error.code === "VALIDATION_ERROR", String(error));
    return error.details ?? [];
  }
}

/** The issues /v1/annotate's schema names for the same fields as JSON. */
function jsonIssues(fields: unknown[]): FieldIssue[] {
  const result = annotateSchema.safeParse({ document: { base64: "AAAA" }, fields });
  return result.success ? [] : fieldIssues(result.error);
}

describe("an AnnotateRequest message is held to /v1/annotate's rules and limits", () => {
  test("the field count: none, and one over the limit, are refused naming `fields`, before any field is looked at", () => {
    assert.deepEqual(messageIssues([]), [{ field: "fields", issue: "must have at least one field" }]);
    const over = Array.from({ length: ANNOTATE_LIMITS.maxFields + 1 }, () => field({ id: "signature", type: "signature", signerName: "Al" }));
    assert.deepEqual(messageIssues(over), [{ field: "fields", issue: `must have at most ${ANNOTATE_LIMITS.maxFields} fields` }]);
    assert.deepEqual(jsonIssues(over.map(() => ({ id: "signature", type: "signature", options: { signerName: "Al" } }))), messageIssues(over));
    // a hundred thousand fields cost the count, not a look at each
    const started = performance.now();
    messageIssues(Array.from({ length: 100_000 }, () => over[0]));
    assert.ok(performance.now() - started < 200, `${performance.now() - started} ms`);
    assert.deepEqual(messageIssues(over.slice(1)), []);
  });

  test("every string's length, rows and cells, dimensions: the message and the JSON get the same issues, naming each field", () => {
    const long = (n: number) => "x".repeat(n);
    const message = [
      field({ id: "signature", type: "signature", signerName: long(20_000) }),
      field({ id: "signature", type: "signature", signerName: "Ada", topLabel: long(ANNOTATE_LIMITS.maxLabelChars + 1), bottomLabel: long(ANNOTATE_LIMITS.maxLabelChars) }),
      field({ id: long(ANNOTATE_LIMITS.maxKeyChars + 1), type: "text", value: "x" }),
      field({ group: long(ANNOTATE_LIMITS.maxKeyChars + 1), type: "text", value: "x" }),
      field({ id: "items", type: "table", rows: [{ cells: [long(ANNOTATE_LIMITS.maxCellChars + 1)] }] }),
      field({ id: "items", type: "table", rows: [{ cells: Array.from({ length: ANNOTATE_LIMITS.maxCells + 1 }, () => "c") }] }),
      field({ id: "items", type: "table", rows: Array.from({ length: ANNOTATE_LIMITS.maxRows + 1 }, () => ({ cells: ["c"] })) }),
      field({ id: "signature", type: "image", value: "AAAA", width: ANNOTATE_LIMITS.maxDimensionPx + 1, height: 10 }),
      field({ id: "signature", type: "image", value: "AAAA", width: -5, height: 0 }),
      field({ id: "customer", type: "text", value: long(ANNOTATE_LIMITS.maxValueChars + 1) }),
    ];
    const json = [
      { id: "signature", type: "signature", options: { signerName: long(20_000) } },
      { id: "signature", type: "signature", options: { signerName: "Ada", topLabel: long(ANNOTATE_LIMITS.maxLabelChars + 1), bottomLabel: long(ANNOTATE_LIMITS.maxLabelChars) } },
      { id: long(ANNOTATE_LIMITS.maxKeyChars + 1), type: "text", value: "x" },
      { group: long(ANNOTATE_LIMITS.maxKeyChars + 1), type: "text", value: "x" },
      { id: "items", type: "table", value: [[long(ANNOTATE_LIMITS.maxCellChars + 1)]] },
      { id: "items", type: "table", value: [Array.from({ length: ANNOTATE_LIMITS.maxCells + 1 }, () => "c")] },
      { id: "items", type: "table", value: Array.from({ length: ANNOTATE_LIMITS.maxRows + 1 }, () => ["c"]) },
      { id: "signature", type: "image", value: "AAAA", options: { dimensions: { width: ANNOTATE_LIMITS.maxDimensionPx + 1, height: 10 } } },
      { id: "signature", type: "image", value: "AAAA", options: { dimensions: { width: -5, height: 0 } } },
      { id: "customer", type: "text", value: long(ANNOTATE_LIMITS.maxValueChars + 1) },
    ];
    const issues = messageIssues(message);
    assert.deepEqual(issues, jsonIssues(json));
    assert.deepEqual(issues.map((i) => i.field), [
      "fields[0].options.signerName",
      "fields[1].options.topLabel",
      "fields[2].id",
      "fields[3].group",
      "fields[4].value[0][0]",
      "fields[5].value",
      "fields[6].value",
      "fields[7].options.dimensions.width",
      "fields[8].options.dimensions.width",
      "fields[8].options.dimensions.height",
      "fields[9].value",
    ]);
    assert.equal(issues[0].issue, `must be at most ${ANNOTATE_LIMITS.maxLabelChars} characters`);
    assert.equal(issues[5].issue, `row 0 must have at most ${ANNOTATE_LIMITS.maxCells} cells`);
    assert.equal(issues[6].issue, `must have at most ${ANNOTATE_LIMITS.maxRows} rows`);
  });

  test("at most ANNOTATE_LIMITS.maxDrawnSignatures different signatures drawn from a name; fields that repeat one draw nothing more", () => {
    const max = ANNOTATE_LIMITS.maxDrawnSignatures;
    const drawn = (i: number) => field({ id: "signature", type: "signature", signerName: `Signer ${i % (max + 1)}`, bottomLabel: "2026-11-25" });
    const over = Array.from({ length: ANNOTATE_LIMITS.maxFields }, (_, i) => drawn(i));
    const issues = messageIssues(over);
    assert.deepEqual(issues.map((i) => i.field), [`fields[${max}].options.signerName`]);
    assert.match(issues[0].issue, new RegExp(`than the ${max} different ones a request may draw`));
    assert.deepEqual(jsonIssues(over.map((f) => ({ id: f.id, type: f.type, options: { signerName: f.signerName, bottomLabel: f.bottomLabel } }))), issues);
    // the same name with other labels is another drawing; a thousand fields of fifty drawings pass
    assert.equal(messageIssues([...over.slice(0, max), field({ ...over[0], bottomLabel: "2026-11-26" })]).length, 1);
    assert.deepEqual(messageIssues(Array.from({ length: ANNOTATE_LIMITS.maxFields }, (_, i) => drawn(i % max))), []);
  });

  test("the shape rules: id or group, the type, a value of the type's shape, a signature's image or name, labels only on signatures", () => {
    const issues = messageIssues([
      field({ type: "text", value: "x" }),
      field({ id: "a", group: "b", type: "text", value: "x" }),
      field({ id: "a", type: "colour", value: "x" }),
      field({ id: "signature", type: "signature", value: "x", signerName: "Ada" }),
      field({ id: "customer", type: "text", value: "x", topLabel: "Signed by" }),
      field({ id: "items", type: "table" }),
      field({ id: "items", type: "table", value: "x", rows: [{ cells: ["a"] }] }),
      field({ id: "signature", type: "image" }),
    ]);
    assert.deepEqual(issues.map((i) => i.field), ["fields[6].value", "fields[0]", "fields[1]", "fields[2].type", "fields[3].value", "fields[4].options", "fields[5].value", "fields[7].value"]);
    // a text may be empty (it empties its control), as in JSON
    assert.deepEqual(messageIssues([field({ id: "customer", type: "text", value: "" })]), []);
  });
});
