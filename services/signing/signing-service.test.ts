import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AuditEventType, SignRequest } from "../../gen/ts-proto/docservice/v1/signing.js";
import { rejection } from "../../test/support/service-errors.js";
import { MAX_JSON_DEPTH } from "../core/json-shape.js";
import type { SignatureLedger } from "./ledger/signature-ledger.js";
import type { SigningJob } from "./workers/signing-job.js";
import { SigningService, type SigningServiceDeps } from "./signing-service.js";

// What SigningService itself refuses, as a gRPC caller reaches it (no gateway schema before it):
// free-form JSON too deep for the recursive code after the check, and identifiers too long for the ledger's keys.

/** A dependency that fails the test when the request gets as far as using it. */
const untouchable = <T extends object>(name: string) =>
  new Proxy({}, {
    get: () => {
      throw new Error(`the request reached the ${name}`);
    },
  }) as T;

const signed: SigningJob[] = [];
const service = new SigningService({
  key: untouchable("signing key"),
  workers: { sign: async (job: SigningJob) => (signed.push(job), Buffer.from("%PDF-signed")) } as unknown as SigningServiceDeps["workers"],
  ledger: untouchable<SignatureLedger>("ledger"),
  conversion: untouchable("converter"),
  settings: { maxDocumentBytes: 1024, metadataMaxBytes: 4096, replayTtlMs: 1000, fetch: { timeoutMs: 1000, maxRedirects: 0, allowHosts: [] }, defaultLevel: "B-B" },
  health: async () => {},
});

const request = (overrides: Partial<SignRequest> = {}): SignRequest =>
  SignRequest.fromPartial({
    document: { content: Buffer.from("%PDF-1.7\n") },
    signer: { email: "jane@example.com", name: "Jane" },
    auditTrail: [{ type: AuditEventType.AUDIT_EVENT_TYPE_SUBMIT, timestamp: new Date("2026-11-21T09:00:00Z") }],
    ...overrides,
  });

const nested = (levels: number) => JSON.parse('{"a":'.repeat(levels) + "1" + "}".repeat(levels)) as Record<string, unknown>;

const refusal = (call: Promise<unknown>) => rejection(call, "VALIDATION_ERROR");

describe("SigningService.sign: the edge a gRPC caller meets", () => {
  test("metadata and audit data nested 20,000 levels are a VALIDATION_ERROR naming the place, not a stack overflow", async () => {
    const deep = `.a`.repeat(MAX_JSON_DEPTH);
    assert.deepEqual((await refusal(service.sign(request({ metadata: nested(20_000) })))).details, [
      { field: `metadata${deep}`, issue: `is nested deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
    const auditTrail = [...request().auditTrail, { type: AuditEventType.AUDIT_EVENT_TYPE_READY, timestamp: new Date(), data: nested(20_000) }];
    assert.deepEqual((await refusal(service.sign(request({ auditTrail })))).details?.map((d) => d.field), [`auditTrail[1].data${deep}`]);
  });

  test("the deepest data the check accepts still crosses gRPC, and is signed", async () => {
    const deepest = nested(MAX_JSON_DEPTH);
    const auditTrail = [{ ...request().auditTrail[0], data: deepest }];
    const crossed = SignRequest.decode(SignRequest.encode(request({ auditTrail, metadata: deepest })).finish());
    await service.sign(crossed);
    assert.equal(signed.at(-1)?.metadataJson, JSON.stringify(deepest));
  });

  test("an eventId too long or with control characters, and a callerKeyId that is no key id, never reach the ledger", async () => {
    const keyId = "0".repeat(64);
    const fields = async (overrides: Partial<SignRequest>) => (await refusal(service.sign(request({ callerKeyId: keyId, ...overrides })))).details?.map((d) => d.field);
    assert.deepEqual(await fields({ eventId: "e".repeat(201) }), ["eventId"]);
    assert.deepEqual(await fields({ eventId: "e".repeat(10_000) }), ["eventId"]);
    assert.deepEqual(await fields({ eventId: "line\nbreak" }), ["eventId"]);
    assert.deepEqual(await fields({ eventId: "e-1", callerKeyId: "k".repeat(2000) }), ["callerKeyId"]);
  });
});
