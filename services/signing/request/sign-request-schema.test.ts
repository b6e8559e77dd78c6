import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MAX_JSON_DEPTH } from "../../core/json-shape.js";
import { signRequestIssues, signRequestSchema } from "./sign-request-schema.js";

const schema = signRequestSchema({ metadataMaxBytes: 64 });
const valid = {
  document: { base64: "JVBERi0xLjcK" },
  signer: { email: "jane@example.com", name: "Jane" },
  auditTrail: [{ type: "submit", timestamp: "2026-11-21T09:00:00Z" }],
};
const issues = (body: unknown) => {
  const result = schema.safeParse(body);
  return result.success ? [] : signRequestIssues(result.error);
};
const fields = (body: unknown) => issues(body).map((i) => i.field);

describe("sign request rules", () => {
  test("a minimal request passes; optional fields are optional", () => {
    assert.deepEqual(issues(valid), []);
    assert.deepEqual(issues({ ...valid, eventId: "e-1", metadata: { a: 1 }, certificate: { enabled: false } }), []);
    assert.deepEqual(issues({ ...valid, signer: { ...valid.signer, ip: "2001:db8::1", userAgent: "UA" } }), []);
  });

  test("field paths name array positions and nested keys", () => {
    const body = { ...valid, auditTrail: [{ type: "field_change", timestamp: "2026-11-21T09:00:00Z", data: { value: "x" } }] };
    assert.deepEqual(fields(body), ["auditTrail[0].data.fieldId", "auditTrail"]);
  });

  test("unknown fields are each named; a signer's points to metadata", () => {
    const found = issues({ ...valid, signer: { ...valid.signer, phone: "1", company: "X" }, extra: 1 });
    assert.deepEqual(found.map((i) => i.field), ["signer.phone", "signer.company", "extra"]);
    assert.match(found[0].issue, /metadata/);
    assert.doesNotMatch(found[2].issue, /metadata/);
  });

  test("document needs exactly one of base64 and url; base64 must be canonical", () => {
    assert.deepEqual(fields({ ...valid, document: {} }), ["document"]);
    assert.deepEqual(fields({ ...valid, document: { base64: "AAAA", url: "https://x" } }), ["document"]);
    assert.deepEqual(fields({ ...valid, document: { base64: "not base64!" } }), ["document.base64"]);
    assert.deepEqual(fields({ ...valid, document: { base64: "AAA" } }), ["document.base64"]);
  });

  test("timestamps are ISO 8601 UTC; names 2–255 characters; e-mail valid; metadata within its limit", () => {
    const at = (timestamp: string) => fields({ ...valid, auditTrail: [{ type: "submit", timestamp }] });
    assert.deepEqual(at("2026-11-21T09:00:00.123Z"), []);
    assert.deepEqual(at("2026-11-21T10:00:00+01:00"), ["auditTrail[0].timestamp"]);
    assert.deepEqual(at("yesterday"), ["auditTrail[0].timestamp"]);
    assert.deepEqual(fields({ ...valid, signer: { email: "x@y", name: " J " } }), ["signer.email", "signer.name"]);
    assert.deepEqual(fields({ ...valid, signer: { ...valid.signer, name: "n".repeat(256) } }), ["signer.name"]);
    assert.deepEqual(fields({ ...valid, metadata: { text: "x".repeat(80) } }), ["metadata"]);
    assert.deepEqual(fields({ ...valid, metadata: [1, 2] }), ["metadata"]);
  });

  test("scroll percent is 0–100; field values are scalars or arrays of them", () => {
    const event = (type: string, data: unknown) => ({ ...valid, auditTrail: [{ type, timestamp: "2026-11-21T09:00:00Z", data }, valid.auditTrail[0]] });
    assert.deepEqual(fields(event("scroll", { percent: 55.5 })), []);
    assert.deepEqual(fields(event("scroll", { percent: -1 })), ["auditTrail[0].data.percent"]);
    assert.deepEqual(fields(event("field_change", { fieldId: "f", value: ["a", 1, null] })), []);
    assert.deepEqual(fields(event("field_change", { fieldId: "f", value: { nested: true } })), ["auditTrail[0].data.value"]);
  });

  test("free-form JSON nested 20,000 levels (which JSON.stringify cannot take) is refused and named, in metadata and in every audit event's data", () => {
    const deep = () => JSON.parse('{"a":'.repeat(20_000) + "1" + "}".repeat(20_000)) as Record<string, unknown>;
    const depthIssue = { issue: `is nested deeper than ${MAX_JSON_DEPTH} levels` };
    assert.deepEqual(issues({ ...valid, metadata: deep() }), [{ field: `metadata${".a".repeat(MAX_JSON_DEPTH)}`, ...depthIssue }]);
    const events = [
      { type: "ready", data: deep() },
      { type: "scroll", data: { percent: 5, extra: deep() } },
      { type: "field_change", data: { fieldId: "f", value: "v", extra: deep() } },
      { type: "submit", data: deep() },
    ].map((event) => ({ ...event, timestamp: "2026-11-21T09:00:00Z" }));
    assert.deepEqual(
      fields({ ...valid, auditTrail: events }),
      ["auditTrail[0].data", "auditTrail[1].data.extra", "auditTrail[2].data.extra", "auditTrail[3].data"].map((data) => `${data}${".a".repeat(data.endsWith("extra") ? MAX_JSON_DEPTH - 1 : MAX_JSON_DEPTH)}`),
    );
  });

  test("metadata and audit data nested 32 levels are accepted", () => {
    const nested = JSON.parse('{"a":'.repeat(MAX_JSON_DEPTH - 1) + "{}" + "}".repeat(MAX_JSON_DEPTH - 1)) as Record<string, unknown>;
    const roomy = signRequestSchema({ metadataMaxBytes: 4096 });
    assert.equal(roomy.safeParse({ ...valid, metadata: nested, auditTrail: [{ ...valid.auditTrail[0], data: nested }] }).success, true);
  });
});
