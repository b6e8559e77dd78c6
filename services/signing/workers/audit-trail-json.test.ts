import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { auditTrailJson } from "./audit-trail-json.js";

describe("auditTrailJson", () => {
  test("writes what JSON.stringify writes of the audit with the parsed metadata appended, for any JSON object", () => {
    const audit = fc.record({ documentId: fc.string(), signedAt: fc.date({ noInvalidDate: true }), events: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }) });
    const metadata = fc.dictionary(fc.string({ maxLength: 6 }).filter((key) => key !== "__proto__"), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });
    fc.assert(
      fc.property(audit, metadata, (audit, metadata) => {
        const metadataJson = JSON.stringify(JSON.parse(JSON.stringify(metadata))); // as the service writes a request's metadata
        assert.equal(auditTrailJson(audit, metadataJson), JSON.stringify({ ...audit, metadata: JSON.parse(metadataJson) as unknown }));
      }),
      { numRuns: 300 },
    );
  });

  test("without metadata, the audit alone", () => {
    assert.equal(auditTrailJson({ a: 1 }, undefined), '{"a":1}');
  });
});
