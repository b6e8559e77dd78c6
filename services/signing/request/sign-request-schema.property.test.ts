import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ServiceError, validationError } from "../../core/errors.js";
import { normalizeEmail } from "../../core/email-address.js";
import { signRequestIssues, signRequestSchema, verifyRequestSchema } from "./sign-request-schema.js";

// Property tests of the POST /v1/sign and /v1/verify body rules, used as the gateway uses them
// (safeParse, then validationError(signRequestIssues(...))): whatever JSON arrives, the answer
// is the parsed request or a 400 naming every problem, never another error; every request a
// client may send is accepted unchanged, and what is accepted is something the signing path
// can use (one document source, decodable base64, real times, a submit event).

const NUM_RUNS = 200;
const limits = { metadataMaxBytes: 4096 };
const signSchema = signRequestSchema(limits);

/** The gateway's handling of a parsed body: the request, or the ServiceError it throws (must be a 400 with details). */
function parse<T>(schema: { safeParse(body: unknown): { success: true; data: T } | { success: false; error: import("zod").ZodError } }, body: unknown): T | ServiceError {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const error = validationError(signRequestIssues(result.error));
  assert.equal(error.httpStatus, 400);
  assert.ok(error.details!.length > 0, "no details");
  for (const { field, issue } of error.details!) {
    assert.equal(typeof field, "string");
    assert.ok(typeof issue === "string" && issue.length > 0, `issue ${JSON.stringify(issue)}`);
  }
  return error;
}

const time = fc.date({ min: new Date("0000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }).map((d) => d.toISOString());
const scalar = fc.oneof(fc.string({ maxLength: 30 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const data = fc.dictionary(fc.string({ maxLength: 10 }).filter((key) => key !== "__proto__"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });

const auditEvent = fc.oneof(
  fc.record({ type: fc.constant("ready"), timestamp: time, data }, { requiredKeys: ["type", "timestamp"] }),
  fc.record({ type: fc.constant("scroll"), timestamp: time, data: fc.record({ percent: fc.double({ min: 0, max: 100, noNaN: true }) }) }),
  fc.record({
    type: fc.constant("field_change"),
    timestamp: time,
    data: fc.record(
      { fieldId: fc.string({ minLength: 1, maxLength: 200 }), value: fc.oneof(scalar, fc.array(scalar, { maxLength: 3 })), previousValue: scalar },
      { requiredKeys: ["fieldId", "value"] },
    ),
  }),
  fc.record({ type: fc.constant("submit"), timestamp: time, data }, { requiredKeys: ["type", "timestamp"] }),
);
const submit = fc.record({ type: fc.constant("submit"), timestamp: time });

const document = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 48 }).map((bytes) => ({ base64: Buffer.from(bytes).toString("base64") })),
  fc.webUrl().map((url) => ({ url })),
);

const validSignRequest = fc
  .record(
    {
      document,
      signer: fc.record(
        {
          email: fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,15}[a-z0-9]@[a-z0-9]{1,10}(\.[a-z0-9]{1,10})?\.[a-z]{2,6}$/).filter((e) => !e.includes("..")),
          name: fc.string({ minLength: 2, maxLength: 100 }).filter((name) => name.trim().length >= 2),
          ip: fc.oneof(fc.ipV4(), fc.ipV6()),
          userAgent: fc.string({ maxLength: 200 }),
        },
        { requiredKeys: ["email", "name"] },
      ),
      auditTrail: fc.tuple(fc.array(auditEvent, { maxLength: 5 }), submit, fc.array(auditEvent, { maxLength: 5 })).map(([before, last, after]) => [...before, last, ...after]),
      eventId: fc.string({ minLength: 1, maxLength: 200, unit: "grapheme" }).filter((id) => !/[\u0000-\u001f\u007f-\u009f]/.test(id)),
      metadata: fc.dictionary(fc.string({ maxLength: 10 }).filter((key) => key !== "__proto__"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
      certificate: fc.record({ enabled: fc.boolean() }, { requiredKeys: [] }),
    },
    { requiredKeys: ["document", "signer", "auditTrail"] },
  )
  .map((request) => JSON.parse(JSON.stringify(request)) as Record<string, any>) // as the gateway receives it
  .filter((request) => Buffer.byteLength(JSON.stringify(request.metadata ?? {})) <= limits.metadataMaxBytes);

const PATHS = ["document", "document.base64", "document.url", "signer", "signer.email", "signer.name", "signer.ip", "auditTrail", "auditTrail.0", "auditTrail.0.type", "auditTrail.0.timestamp", "auditTrail.0.data", "eventId", "metadata", "certificate", "certificate.enabled", "extra"];

/** A valid request with one part replaced by any JSON value. */
const nearMiss = fc.tuple(validSignRequest, fc.constantFrom(...PATHS), fc.jsonValue({ maxDepth: 3 })).map(([request, path, value]) => {
  const keys = path.split(".");
  let target = request;
  for (const key of keys.slice(0, -1)) {
    if (typeof target[key] !== "object" || target[key] === null) target[key] = {};
    target = target[key];
  }
  target[keys.at(-1)!] = value;
  return request;
});

describe("sign and verify request bodies (fast-check)", () => {
  test("any JSON value: parsed or a 400 naming fields, nothing else thrown", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (body) => {
        parse(signSchema, body);
        parse(verifyRequestSchema, body);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("a valid request with one part replaced by any JSON: parsed or a 400, and what is parsed is usable", () => {
    fc.assert(
      fc.property(nearMiss, (body) => {
        const parsed = parse(signSchema, body);
        if (parsed instanceof ServiceError) return;
        // what the route then does with it (sign-routes.ts toSignRequest) must work
        assert.ok((parsed.document.base64 === undefined) !== (parsed.document.url === undefined));
        if (parsed.document.base64 !== undefined) assert.equal(Buffer.from(parsed.document.base64, "base64").toString("base64"), parsed.document.base64);
        assert.ok(parsed.auditTrail.some((event) => event.type === "submit"));
        for (const event of parsed.auditTrail) assert.ok(!Number.isNaN(new Date(event.timestamp).getTime()), event.timestamp);
        assert.notEqual(normalizeEmail(parsed.signer.email), undefined);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("every valid request is accepted unchanged", () => {
    fc.assert(
      fc.property(validSignRequest, (request) => {
        const sent = structuredClone(request);
        const parsed = parse(signSchema, request);
        assert.ok(!(parsed instanceof ServiceError), parsed instanceof ServiceError ? parsed.message : "");
        assert.deepEqual(JSON.parse(JSON.stringify(parsed)), sent);
        const verify = parse(verifyRequestSchema, { document: sent.document });
        assert.deepEqual(verify, { document: sent.document });
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("an unknown field is named so the client can find it, whatever its key", () => {
    const identifier = /^[A-Za-z_$][\w$]*$/;
    fc.assert(
      fc.property(fc.constantFrom<string[]>([], ["document"], ["signer"]), fc.string({ maxLength: 3 }), (at, key) => {
        const body: Record<string, any> = { document: { base64: "AAAA" }, signer: { email: "a@example.test", name: "Jo" }, auditTrail: [{ type: "submit", timestamp: "2026-01-01T00:00:00Z" }] };
        let target = body;
        for (const part of at) target = target[part];
        if (Object.hasOwn(target, key) || key === "__proto__") return;
        target[key] = 1;
        const error = parse(signSchema, body);
        assert.ok(error instanceof ServiceError);
        const expected = identifier.test(key) ? [...at, key].join(".") : `${at.join(".")}[${JSON.stringify(key)}]`;
        assert.ok(
          error.details!.some(({ field }) => field === expected),
          `unknown key ${JSON.stringify(key)} at ${at.join(".") || "the top"}: expected ${expected}, got ${JSON.stringify(error.details)}`,
        );
      }),
      { numRuns: 100 },
    );
  });

  test("a __proto__ key in metadata or audit data is refused, not silently dropped", () => {
    const base = { document: { base64: "AAAA" }, signer: { email: "a@example.test", name: "Jo" } };
    const proto = JSON.parse('{"__proto__": {"x": 1}, "kept": true}');
    const inMetadata = parse(signSchema, { ...base, auditTrail: [{ type: "submit", timestamp: "2026-01-01T00:00:00Z" }], metadata: proto });
    assert.ok(inMetadata instanceof ServiceError);
    assert.deepEqual(inMetadata.details, [{ field: "metadata", issue: "must not have a key named __proto__" }]);
    const inAudit = parse(signSchema, { ...base, auditTrail: [{ type: "submit", timestamp: "2026-01-01T00:00:00Z", data: proto }] });
    assert.ok(inAudit instanceof ServiceError);
    assert.deepEqual(inAudit.details, [{ field: "auditTrail[0].data", issue: "must not have a key named __proto__" }]);
  });

  test("eventId: refused exactly when it holds a control character (Unicode Cc), whatever else it holds", () => {
    const base = { document: { base64: "AAAA" }, signer: { email: "a@example.test", name: "Jo" }, auditTrail: [{ type: "submit", timestamp: "2026-01-01T00:00:00Z" }] };
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 1, maxLength: 20 }), (eventId) => {
        const result = parse(signSchema, { ...base, eventId });
        const hasControl = /\p{Cc}/u.test(eventId);
        assert.equal(result instanceof ServiceError, hasControl, JSON.stringify(eventId));
        if (result instanceof ServiceError) assert.deepEqual(result.details, [{ field: "eventId", issue: "must not contain control characters" }]);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("base64 that is not standard (padding, alphabet, length) is a 400 on document.base64", () => {
    const bad = fc.oneof(
      fc.string({ minLength: 1, maxLength: 12 }).filter((text) => !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)),
      fc.uint8Array({ minLength: 1, maxLength: 12 }).map((bytes) => Buffer.from(bytes).toString("base64url").replace(/=+$/, "")).filter((text) => /[-_]/.test(text) || text.length % 4 !== 0),
    );
    fc.assert(
      fc.property(bad, (base64) => {
        const error = parse(verifyRequestSchema, { document: { base64 } });
        assert.ok(error instanceof ServiceError, `${JSON.stringify(base64)} was accepted`);
        assert.ok(error.details!.some((d) => d.field === "document.base64"), JSON.stringify(error.details));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
