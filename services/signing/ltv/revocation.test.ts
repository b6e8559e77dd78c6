// RevocationSource against the test PKI's servers (test/support/test-pki.ts:
// openssl's OCSP responses and CRLs, issuer certificates by caIssuers): the
// chain completed from the AIA URLs, OCSP first, the CRL distribution
// points when OCSP is down, and a revoked signer failing closed either way.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { ServiceError } from "../../core/errors.js";
import { startTestPki, type TestPki, type TestPkiName } from "../../../test/support/test-pki.js";
import { RevocationSource } from "./revocation.js";

describe("RevocationSource", () => {
  let pki: TestPki;
  const der = (name: TestPkiName) => readFileSync(pki[name].certDer);
  const source = () => new RevocationSource({ timeoutMs: 5000, allowHosts: ["127.0.0.1"], cacheMs: 0 });

  before(async () => {
    pki = await startTestPki();
  });
  after(() => pki?.stop());

  test("OCSP first: a response for the signer and one for the intermediate, with their responders' certificates; the issuers fetched by caIssuers", async () => {
    const data = await source().collect([[der("signerA")]]);
    assert.deepEqual(data.certificates, [der("signerA"), der("intermediate"), der("root"), der("intermediateOcsp"), der("rootOcsp")]);
    assert.equal(data.ocspResponses.length, 2);
    assert.deepEqual(data.crls, []);
  });

  test("with OCSP down, the CRLs of the distribution points", async () => {
    await pki.stopRevocationServices(["ocsp"]);
    try {
      const crlRequests = pki.requests.crl;
      const data = await source().collect([[der("signerA"), der("intermediate")]]);
      assert.deepEqual(data.certificates, [der("signerA"), der("intermediate"), der("root")]);
      assert.deepEqual([data.ocspResponses.length, data.crls.length, pki.requests.crl - crlRequests], [0, 2, 2]);
    } finally {
      await pki.startRevocationServices();
    }
  });

  for (const down of [[], ["ocsp"]] as const) {
    test(`a revoked signer fails closed, at the revocation time of the CA's database (${down.length ? "by the CRL" : "by OCSP"})`, async () => {
      await pki.stopRevocationServices([...down]);
      try {
        const error = await source().collect([[der("revoked")]]).then(
          () => assert.fail("collected validation data for a revoked certificate"),
          (caught: unknown) => caught,
        );
        assert.ok(error instanceof ServiceError && error.code === "UNAVAILABLE", String(error));
        const since = pki.revocationOf("revoked")!.time.toISOString();
        assert.equal(error.message, `The certificate O=DocService tests, CN=DocService test revoked signer is revoked (${down.length ? "CRL" : "OCSP"}, since ${since}).`);
      } finally {
        await pki.startRevocationServices();
      }
    });
  }
});
