import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { SignRequest } from "../../../gen/ts-proto/docservice/v1/signing.js";
import { ServiceError } from "../../core/errors.js";
import { signMessageFromJson } from "./sign-message-from-json.js";
import { signOrderFromMessage } from "./sign-order-from-message.js";
import { signRequestIssues, signRequestSchema } from "./sign-request-schema.js";

// The gateway makes a body into the message and checks only what the message cannot carry;
// SigningService checks the values. Together they must answer every body as the contract does:
// the same problems, fields and order, and an order for exactly the bodies the contract accepts.

const settings = { metadataMaxBytes: 256, defaultLevel: "B-B" as const };
const contract = signRequestSchema(settings);
const KEY_ID = "0".repeat(64);

type Answer = { issues: unknown } | { order: unknown };

function contractAnswer(body: unknown): Answer {
  const result = contract.safeParse(body);
  return result.success ? { order: true } : { issues: signRequestIssues(result.error) };
}

/** The gateway, then the service, the message crossing gRPC between them when `crossing`. */
function platformAnswer(body: unknown, crossing: boolean): Answer {
  try {
    const content = Buffer.from("%PDF-1.7\n");
    let message = signMessageFromJson({ value: structuredClone(body), content }, contract, KEY_ID);
    if (crossing) message = SignRequest.decode(SignRequest.encode(message).finish());
    signOrderFromMessage(message, settings);
    return { order: true };
  } catch (error) {
    if (!(error instanceof ServiceError) || error.code !== "VALIDATION_ERROR") throw error;
    return { issues: error.details };
  }
}

const valid = () => ({
  document: { base64: "AAAA" },
  signer: { email: "jane@example.com", name: "Jane" },
  auditTrail: [
    { type: "scroll", timestamp: "2026-11-21T09:00:00Z", data: { percent: 5 } },
    { type: "submit", timestamp: "2026-11-21T09:00:01Z" },
  ],
  eventId: "e-1",
  metadata: { k: "v" },
});

const PATHS = [
  "document", "document.base64", "document.url", "signer", "signer.email", "signer.name", "signer.ip", "signer.userAgent",
  "auditTrail", "auditTrail.0", "auditTrail.0.type", "auditTrail.0.timestamp", "auditTrail.0.data", "auditTrail.0.data.percent", "auditTrail.1",
  "eventId", "metadata", "certificate", "certificate.enabled", "level", "extra",
];
const replacement = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom("", "B-LT", "b-b", "submit", "ready", "field_change", "2026-01-01T00:00:00Z", "2026-01-01 00:00", "1.2.3.4", "=", "AAAA", "https://x", {}, [], { percent: 50 }, { fieldId: "f", value: 1 }, "x".repeat(300)),
);
const nearMiss = fc.array(fc.tuple(fc.constantFrom(...PATHS), replacement), { minLength: 1, maxLength: 3 }).map((changes) => {
  const body: Record<string, any> = valid();
  for (const [path, value] of changes) {
    const keys = path.split(".");
    let target = body;
    for (const key of keys.slice(0, -1)) {
      if (typeof target[key] !== "object" || target[key] === null) target[key] = {};
      target = target[key];
    }
    target[keys.at(-1)!] = value;
  }
  return body;
});

describe("a /v1/sign body through the gateway and the service", () => {
  test("answered as the contract answers it, in this process and across gRPC (fast-check)", () => {
    fc.assert(
      fc.property(nearMiss, (body) => {
        const expected = contractAnswer(body);
        assert.deepEqual(platformAnswer(body, false), expected);
        assert.deepEqual(platformAnswer(body, true), expected);
      }),
      { numRuns: 1000 },
    );
  });

  test("a body the message cannot carry gets every problem, its values' too", () => {
    const body = { ...valid(), signer: { email: "not-an-address", name: "J", phone: "1" }, eventId: "", level: "" };
    assert.deepEqual(
      platformAnswer(body, false),
      { issues: signRequestIssues(contract.safeParse(body).error!) },
    );
    assert.deepEqual(
      (platformAnswer(body, false) as { issues: { field: string }[] }).issues.map((issue) => issue.field),
      ["signer.email", "signer.name", "signer.phone", "eventId", "level"],
    );
  });

  test("a free-form top-level __proto__ key is refused before the message is encoded (a Struct would drop it)", () => {
    const body = { ...valid(), metadata: JSON.parse('{"__proto__":{"x":1}}') as unknown };
    assert.throws(() => signMessageFromJson({ value: body }, contract, KEY_ID), (error: ServiceError) => error.details?.[0]?.field === "metadata");
  });

  test("the message carries the body as it was sent, without defaults", () => {
    const message = signMessageFromJson({ value: valid(), content: Buffer.from("%PDF") }, contract, KEY_ID);
    assert.equal(message.level, "");
    assert.equal(message.certificate, undefined);
    assert.equal(message.callerKeyId, KEY_ID);
    assert.deepEqual(message.auditTrail[0].timestamp, new Date("2026-11-21T09:00:00Z"));
    assert.deepEqual(message.document, { content: Buffer.from("%PDF") });
  });
});
