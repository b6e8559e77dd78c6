// /v1/sign through each key backend and key type, on the platform in its own
// process: a local ECDSA key from PEM files, SoftHSM2 over PKCS#11 with RSA
// (timestamped by a local RFC 3161 TSA) and with ECDSA (trusted roots for
// /v1/verify). The default local RSA key is covered by sign-route.test.ts.
// Outputs are checked with pdfsig, pyHanko and /v1/verify.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createTestPki, TEST_PKI } from "../support/openssl.js";
import { sampleValues } from "../support/metrics-text.js";
import { pageCount } from "../support/pdf-tools.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { pdfsig, pyhankoValidate } from "../support/pdf-validators.js";
import { startPlatform, type Platform } from "../support/platform.js";
import { postJson, signBody, signedPdfOf } from "../support/sign-requests.js";
import { createSoftHsmToken, type SoftHsmToken } from "../support/softhsm.js";
import { startTestTsa, type TestTsa } from "../support/tsa.js";

const dir = mkdtempSync(join(tmpdir(), "docservice-sign-backends-"));
let counter = 0;
const file = (bytes: Buffer) => {
  const path = join(dir, `${++counter}.pdf`);
  writeFileSync(path, bytes);
  return path;
};

interface Backend {
  name: string;
  algorithm: string;
  env: () => Record<string, string>;
  /** PEM files pyHanko trusts. */
  trustRoots: () => string[];
  timestamped: boolean;
  /** /v1/verify checks the chain (SIGNING_TRUST_ANCHORS is set). */
  chainChecked: boolean;
}

describe("signing through each key backend", () => {
  let token: SoftHsmToken;
  let tsa: TestTsa;
  let pdf: Buffer;
  const pkiDir = join(dir, "pki");

  before(async () => {
    token = await createSoftHsmToken();
    tsa = await startTestTsa();
    pdf = await textPdf(2);
    mkdirSync(pkiDir);
    createTestPki(pkiDir, "ec");
    writeFileSync(join(dir, "pin"), `${token.userPin}\n`);
  });

  after(async () => {
    await tsa?.stop();
    await token?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const pkcs11 = (keyLabel: string) => ({
    SIGNING_KEY_BACKEND: "pkcs11",
    PKCS11_MODULE: token.modulePath,
    PKCS11_TOKEN_LABEL: token.tokenLabel,
    PKCS11_KEY_LABEL: keyLabel,
    PKCS11_PIN_FILE: join(dir, "pin"),
  });

  const backends: Backend[] = [
    {
      name: "local key from PEM files (ECDSA P-256, with chain)",
      algorithm: "ECDSA-P256",
      env: () => ({
        SIGNING_KEY_FILE: join(pkiDir, TEST_PKI.signerKey),
        SIGNING_CERTIFICATE_FILE: join(pkiDir, TEST_PKI.signerCertificate),
        SIGNING_CHAIN_FILE: join(pkiDir, TEST_PKI.rootCertificate),
        SIGNING_TRUST_ANCHORS: join(pkiDir, TEST_PKI.rootCertificate),
      }),
      trustRoots: () => [join(pkiDir, TEST_PKI.rootCertificate)],
      timestamped: false,
      chainChecked: true,
    },
    {
      name: "PKCS#11 (SoftHSM2) RSA-2048, timestamped by an RFC 3161 TSA",
      algorithm: "RSA-2048",
      env: () => ({ ...pkcs11("rsa-2048"), SIGNING_TSA_URL: tsa.url }),
      trustRoots: () => [token.caCertificatePath, tsa.caCertificatePath],
      timestamped: true,
      chainChecked: false,
    },
    {
      name: "PKCS#11 (SoftHSM2) ECDSA P-256, trusted roots configured",
      algorithm: "ECDSA-P256",
      env: () => ({ ...pkcs11("ecdsa-p256"), SIGNING_TRUST_ANCHORS: token.caCertificatePath }),
      trustRoots: () => [token.caCertificatePath],
      timestamped: false,
      chainChecked: true,
    },
  ];

  for (const backend of backends) {
    describe(backend.name, () => {
      let platform: Platform;
      const sign = (body: unknown) => postJson(platform.base, "/v1/sign", body, platform.apiKey);

      before(async () => {
        platform = await startPlatform({ CONVERSION_POOL_SIZE: "1", ...backend.env() });
      });
      after(() => platform?.stop());

      test("signs with and without the certificate page; pdfsig, pyHanko and /v1/verify accept both", async () => {
        const key = await postJson(platform.base, "/docservice.v1.SigningService/GetVerificationKey", {});
        assert.equal(key.body.algorithm, backend.algorithm);
        for (const enabled of [true, false]) {
          const signed = signedPdfOf(await sign(signBody(pdf, { certificate: { enabled } })));
          const path = file(signed);
          assert.equal(await pageCount(path), enabled ? 3 : 2);
          const [signature] = (await pdfsig(path)).signatures;
          assert.ok(signature?.valid && signature.totalDocumentSigned, JSON.stringify(signature));
          const pyhanko = await pyhankoValidate(path, backend.trustRoots());
          assert.ok(pyhanko.valid && pyhanko.intact && pyhanko.trusted && pyhanko.coversEntireFile, pyhanko.raw);
          assert.equal(pyhanko.timestamped, backend.timestamped, pyhanko.raw);

          const verified = await postJson(platform.base, "/v1/verify", { document: { base64: signed.toString("base64") } }, platform.apiKey);
          assert.equal(verified.body.valid, true, verified.body.reason);
          assert.equal(verified.body.signers[0].timestamped, backend.timestamped);
          assert.equal(verified.body.signers[0].certificateFingerprint, key.body.certificateSha256);
        }
      });

      if (backend.chainChecked) {
        test("/v1/verify refuses a signature whose certificate does not chain to the trusted roots", async () => {
          const selfSigned = await startPlatform({ CONVERSION_POOL_SIZE: "1" });
          try {
            const foreign = signedPdfOf(await postJson(selfSigned.base, "/v1/sign", signBody(pdf), selfSigned.apiKey));
            const verified = await postJson(platform.base, "/v1/verify", { document: { base64: foreign.toString("base64") } }, platform.apiKey);
            assert.equal(verified.body.valid, false);
            assert.match(verified.body.reason, /trusted/);
            assert.equal(verified.body.signers[0].intact, true);
          } finally {
            await selfSigned.stop();
          }
        });
      }

      if (backend.name.startsWith("PKCS#11")) {
        test("32 parallel signs through the HSM all validate", async () => {
          const results = await Promise.all(Array.from({ length: 32 }, (_, i) => sign(signBody(pdf, { eventId: `parallel-${i}` }))));
          const paths = results.map((result) => file(signedPdfOf(result)));
          for (const path of paths) {
            const [signature] = (await pdfsig(path)).signatures;
            assert.ok(signature?.valid && signature.totalDocumentSigned, path);
          }
          const pyhanko = await pyhankoValidate(paths[31], backend.trustRoots());
          assert.ok(pyhanko.valid, pyhanko.raw);
        });
      }

      if (backend.timestamped) {
        test("a failing TSA fails the request with 503; nothing is signed without the timestamp", async () => {
          for (const misbehaviour of [{ httpStatus: 500 }, { body: Buffer.from("junk") }, { reject: true }]) {
            tsa.misbehave(misbehaviour);
            try {
              const result = await sign(signBody(pdf));
              assert.equal(result.status, 503, JSON.stringify(result.body));
              assert.equal(result.body.code, "UNAVAILABLE");
              assert.match(result.body.message, /timestamp|time-stamp/i);
            } finally {
              tsa.misbehave(undefined);
            }
          }
          assert.equal((await sign(signBody(pdf))).status, 200);
        });

        test("the TSA's certificate expiry is on /metrics once a token was signed with it", async () => {
          const metrics = await (await fetch(`${platform.base}/metrics`)).text();
          const expiry = sampleValues(metrics, "docservice_certificate_expiry_timestamp_seconds", { certificate: "timestamp-authority" });
          assert.deepEqual(expiry, [Date.parse(new X509Certificate(readFileSync(tsa.tsaCertificatePath)).validTo) / 1000]);
        });
      }
    });
  }
});
