/**
 * The long-term signature over HTTP, on the platform as a user runs it: a key
 * and chain from a real PKI, a TSA, SIGNING_LEVEL=B-LT, the PKI's root as
 * SIGNING_TRUST_ANCHORS. A customer's signature, the company's countersignature
 * at B-LTA, /v1/verify's report of both, /v1/timestamp, and fail-closed 503s.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { textPdf } from "../support/pdf-fixtures.js";
import { startPkiPlatform, type PkiPlatform } from "../support/pki-platform.js";
import type { Platform } from "../support/platform.js";
import { postJson, signBody, signedPdfOf } from "../support/sign-requests.js";
import type { TestPki } from "../support/test-pki.js";
import type { TestTsa } from "../support/tsa.js";

describe("long-term signatures over /v1", () => {
  let started: PkiPlatform;
  let pki: TestPki;
  let tsa: TestTsa;
  let platform: Platform;

  before(async () => {
    started = await startPkiPlatform({ SIGNING_LEVEL: "B-LT", CONVERSION_POOL_SIZE: "1" });
    ({ pki, tsa, platform } = started);
  });

  after(async () => {
    await started?.stop();
  });

  const post = (path: string, body: unknown) => postJson(platform.base, path, body, platform.apiKey);

  test("revocation data or the TSA unavailable: 503 with the reason, no weaker document (first: fetched revocation data is cached for minutes)", async () => {
    await pki.stopRevocationServices();
    try {
      const result = await post("/v1/sign", signBody(await textPdf(1)));
      assert.equal(result.status, 503, result.body.message);
      assert.match(result.body.message, /No revocation data/);
      assert.equal(result.body.document, undefined);
    } finally {
      await pki.startRevocationServices();
    }
    tsa.misbehave({ httpStatus: 503 });
    try {
      const result = await post("/v1/sign", signBody(await textPdf(1)));
      assert.equal(result.status, 503, result.body.message);
      assert.match(result.body.message, /timestamp authority/);
    } finally {
      tsa.misbehave(undefined);
    }
  });

  test("signed at the default level, countersigned at B-LTA, verified, extended", async () => {
    const customer = signedPdfOf(await post("/v1/sign", signBody(await textPdf(2), { signer: { name: "Carla Customer", email: "carla@example.test" } })));
    const company = await post("/v1/sign", signBody(customer, { signer: { name: "Conrad Company", email: "conrad@example.test" }, level: "B-LTA" }));
    assert.equal(company.status, 200, JSON.stringify(company.body));
    const countersigned = signedPdfOf(company);
    assert.ok(countersigned.subarray(0, customer.length).equals(customer));

    const verified = await post("/v1/verify", { document: { base64: countersigned.toString("base64") } });
    assert.equal(verified.status, 200);
    assert.equal(verified.body.valid, true, verified.body.reason);
    const [first, second, timestamp] = verified.body.signers;
    assert.deepEqual(
      [first, second].map((signer) => [signer.name, signer.kind, signer.level, signer.indication, signer.laterChangesPermitted, signer.revision]),
      [
        ["Carla Customer", "signature", "B-LTA", "TOTAL-PASSED", true, 2],
        ["Conrad Company", "signature", "B-LTA", "TOTAL-PASSED", true, 4],
      ],
    );
    assert.match(first.revocation, /good \(OCSP, embedded\)/);
    assert.notEqual(first.timestampTime, "");
    assert.equal(timestamp.kind, "document-timestamp");

    const extended = await post("/v1/timestamp", { document: { base64: countersigned.toString("base64") } });
    assert.equal(extended.status, 200, JSON.stringify(extended.body));
    const again = await post("/v1/verify", { document: { base64: signedPdfOf(extended).toString("base64") } });
    assert.equal(again.body.valid, true, again.body.reason);
    assert.equal(again.body.signers.filter((signer: { kind: string }) => signer.kind === "document-timestamp").length, 2);
  });

  test("a level the request names is used; an unknown one is a 400 on `level`", async () => {
    const signed = signedPdfOf(await post("/v1/sign", signBody(await textPdf(1), { level: "B-B" })));
    const verified = await post("/v1/verify", { document: { base64: signed.toString("base64") } });
    assert.equal(verified.body.signers[0].level, "B-B");
    const refused = await post("/v1/sign", signBody(await textPdf(1), { level: "B-XL" }));
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.details.map((detail: { field: string }) => detail.field), ["level"]);
  });

});
