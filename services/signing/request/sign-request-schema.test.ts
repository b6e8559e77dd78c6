import assert from "node:assert/strict";
import { describe, test } from "node:test";
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
});
