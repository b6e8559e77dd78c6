import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AuditEventType, SignRequest } from "../../../gen/ts-proto/docservice/v1/signing.js";
import { ServiceError } from "../../core/errors.js";
import { signOrderFromMessage } from "./sign-order-from-message.js";

const settings = { metadataMaxBytes: 64, defaultLevel: "B-T" as const };
const message = (overrides: Partial<SignRequest> = {}) =>
  SignRequest.fromPartial({
    document: { content: Buffer.from("%PDF-1.7\n") },
    signer: { email: "jane@example.com", name: "Jane" },
    auditTrail: [{ type: AuditEventType.AUDIT_EVENT_TYPE_SUBMIT, timestamp: new Date("2026-11-21T09:00:00Z") }],
    ...overrides,
  });
const problems = (overrides: Partial<SignRequest>) => {
  try {
    signOrderFromMessage(message(overrides), settings);
  } catch (error) {
    assert.ok(error instanceof ServiceError && error.code === "VALIDATION_ERROR");
    return error.details;
  }
  assert.fail("accepted");
};

describe("signOrderFromMessage", () => {
  test("a message's defaults applied: the server's level, the certificate page, no eventId, metadata as its JSON", () => {
    const order = signOrderFromMessage(message({ metadata: { b: 1, a: [true, null] } }), settings);
    assert.equal(order.level, "B-T");
    assert.equal(order.certificatePage, true);
    assert.equal("eventId" in order, false);
    assert.equal(order.metadataJson, '{"b":1,"a":[true,null]}');
    assert.deepEqual(order.signer, { email: "jane@example.com", name: "Jane", ip: undefined, userAgent: undefined });
    assert.deepEqual(order.events, [{ type: "submit", timestamp: new Date("2026-11-21T09:00:00Z") }]);
    const named = signOrderFromMessage(message({ level: "B-LTA", eventId: "e-1", certificate: { enabled: false } }), settings);
    assert.deepEqual([named.level, named.eventId, named.certificatePage, named.metadataJson], ["B-LTA", "e-1", false, undefined]);
  });

  test("every problem at once, under the JSON's field names, in the JSON's order", () => {
    assert.deepEqual(
      problems({
        document: { content: Buffer.from("x"), url: "https://x" },
        signer: { email: "x@y", name: "J", ip: "300.1.1.1", userAgent: "" },
        auditTrail: [{ type: AuditEventType.AUDIT_EVENT_TYPE_UNSPECIFIED, timestamp: new Date(), data: undefined }],
        metadata: { text: "x".repeat(80) },
        level: "B-X",
      })?.map((issue) => issue.field),
      ["document", "signer.email", "signer.name", "signer.ip", "auditTrail[0].type", "auditTrail", "metadata", "level"],
    );
  });

  test("times a JSON timestamp cannot write are refused as such; a missing one too", () => {
    const at = (timestamp: Date | undefined) => problems({ auditTrail: [{ type: AuditEventType.AUDIT_EVENT_TYPE_SUBMIT, timestamp, data: undefined }] });
    for (const timestamp of [new Date("+010000-01-01T00:00:00Z"), new Date("-000001-01-01T00:00:00Z"), new Date(Number.NaN), undefined]) {
      assert.deepEqual(at(timestamp), [{ field: "auditTrail[0].timestamp", issue: "must be an ISO 8601 UTC time, e.g. 2026-11-21T09:30:00Z" }]);
    }
    assert.equal(signOrderFromMessage(message({ auditTrail: [{ type: AuditEventType.AUDIT_EVENT_TYPE_SUBMIT, timestamp: new Date("0000-01-01T00:00:00Z"), data: undefined }] }), settings).events.length, 1);
  });
});
