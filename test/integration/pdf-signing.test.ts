// signPdf end to end: local keys and SoftHSM2 keys (scripts/testenv/setup.sh),
// the signed PDFs checked by two independent validators, poppler's pdfsig and
// pyHanko (test/support/pdf-validators.ts).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { after, before, describe, test } from "node:test";
import { LOCAL_CERTIFICATE_FILE, loadOrCreateLocalKey } from "../../services/signing/keys/local-key.js";
import { signPdf } from "../../services/signing/pdf/pdf-signer.js";
import { openPkcs11Key } from "../../services/signing/keys/pkcs11/pkcs11-key.js";
import type { KeyAlgorithm, SigningKey } from "../../services/signing/keys/signing-key.js";
import { pageCount } from "../support/pdf-tools.js";
import { pdfsig, pyhankoValidate } from "../support/pdf-validators.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { createSoftHsmToken, type SoftHsmToken } from "../support/softhsm.js";

const root = mkdtempSync(join(tmpdir(), "docservice-pdf-signing-"));


interface KeyCase {
  name: string;
  algorithm: KeyAlgorithm;
  key: SigningKey;
  /** PEM file of the trust anchor pyHanko is given. */
  trustRoot: string;
}

describe("PDF signing validated by pdfsig and pyHanko", () => {
  let token: SoftHsmToken;
  const cases: KeyCase[] = [];
  const documents = new Map<number, Buffer>();

  before(async () => {
    // Before any PKCS#11 key is opened: SoftHSM2 reads SOFTHSM2_CONF at C_Initialize.
    token = await createSoftHsmToken();
    for (const algorithm of ["RSA-2048", "ECDSA-P256"] as const) {
      const directory = join(root, `local-${algorithm}`);
      const key = await loadOrCreateLocalKey(directory, { algorithm });
      cases.push({ name: `local ${algorithm}`, algorithm, key, trustRoot: join(directory, LOCAL_CERTIFICATE_FILE) });
    }
    for (const spec of token.keys) {
      const key = await openPkcs11Key({
        modulePath: token.modulePath,
        tokenLabel: token.tokenLabel,
        pin: token.userPin,
        keyLabel: spec.label,
        poolSize: 4,
      });
      cases.push({ name: `SoftHSM2 ${spec.algorithm}`, algorithm: spec.algorithm, key, trustRoot: token.caCertificatePath });
    }
    for (const pages of [1, 20]) documents.set(pages, await textPdf(pages));
  });

  after(async () => {
    await Promise.all(cases.map((c) => c.key.close()));
    await token?.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  test("every key (local RSA-2048/ECDSA-P256, SoftHSM2 RSA-2048/RSA-3072/ECDSA-P256) × 1 and 20 pages", async () => {
    assert.equal(cases.length, 5);
    await Promise.all(
      cases.flatMap((keyCase) =>
        [1, 20].map(async (pages) => {
          const what = `${keyCase.name}, ${pages} page(s)`;
          const signed = await signPdf(documents.get(pages)!, keyCase.key, {
            signerName: "DocService integration test",
            reason: "Testing",
            location: "Loopback",
            signingTime: new Date(),
          });
          const file = join(root, `${keyCase.name.replace(/\W+/g, "-")}-${pages}.pdf`);
          await writeFile(file, signed);

          assert.equal(await pageCount(file), pages, `${what}: page count`);

          const poppler = await pdfsig(file);
          assert.equal(poppler.signatures.length, 1, `${what}: pdfsig signature count\n${poppler.raw}`);
          const [signature] = poppler.signatures;
          assert.ok(signature!.valid, `${what}: pdfsig validity\n${poppler.raw}`);
          assert.ok(signature!.totalDocumentSigned, `${what}: pdfsig total document signed\n${poppler.raw}`);
          assert.equal(signature!.signatureType, "ETSI.CAdES.detached");
          assert.equal(signature!.hashAlgorithm, "SHA-256");

          const hanko = await pyhankoValidate(file, keyCase.trustRoot);
          assert.equal(hanko.signatureCount, 1, `${what}: pyHanko signature count\n${hanko.raw}`);
          assert.ok(hanko.intact, `${what}: pyHanko intact\n${hanko.raw}`);
          assert.ok(hanko.trusted, `${what}: pyHanko trusted\n${hanko.raw}`);
          assert.ok(hanko.coversEntireFile, `${what}: pyHanko coverage\n${hanko.raw}`);
          assert.ok(hanko.valid, `${what}: pyHanko bottom line\n${hanko.raw}`);
          assert.equal(hanko.mechanism, keyCase.algorithm === "ECDSA-P256" ? "sha256_ecdsa" : "sha256_rsa");
        }),
      ),
    );
  });

  test("a tampered signed PDF fails both validators", async () => {
    const keyCase = cases[0]!;
    const signed = await signPdf(documents.get(1)!, keyCase.key, { signerName: "x", signingTime: new Date() });
    const tampered = Buffer.from(signed);
    const at = tampered.indexOf("/MediaBox [ 0 0 595 842 ]");
    assert.ok(at > 0, "the page's MediaBox is in the file");
    tampered.write("/MediaBox [ 0 0 596 842 ]", at, "latin1"); // same length: only the digest changes
    const file = join(root, "tampered.pdf");
    await writeFile(file, tampered);

    const poppler = await pdfsig(file);
    assert.equal(poppler.signatures.length, 1, poppler.raw);
    assert.equal(poppler.signatures[0]!.valid, false, poppler.raw);
    const hanko = await pyhankoValidate(file, keyCase.trustRoot);
    assert.equal(hanko.intact, false, hanko.raw);
    assert.equal(hanko.valid, false, hanko.raw);
  });

  test("32 parallel signatures through one PKCS#11 key (poolSize 4) all validate", async () => {
    const keyCase = cases.find((c) => c.name === "SoftHSM2 RSA-2048")!;
    const inputs = await Promise.all(Array.from({ length: 32 }, () => textPdf(1)));
    const signed = await Promise.all(
      inputs.map((pdf, i) => signPdf(pdf, keyCase.key, { signerName: `parallel ${i}`, signingTime: new Date() })),
    );
    await Promise.all(
      signed.map(async (pdf, i) => {
        const file = join(root, `parallel-${i}.pdf`);
        await writeFile(file, pdf);
        const poppler = await pdfsig(file);
        assert.equal(poppler.signatures.length, 1, `document ${i}\n${poppler.raw}`);
        assert.ok(poppler.signatures[0]!.valid && poppler.signatures[0]!.totalDocumentSigned, `document ${i}\n${poppler.raw}`);
      }),
    );
  });

  test("throughput figure: local RSA-2048 key, one signature at a time", async (t) => {
    const keyCase = cases[0]!;
    for (const pages of [1, 20]) {
      const pdf = documents.get(pages)!;
      await signPdf(pdf, keyCase.key, { signerName: "warm-up", signingTime: new Date() });
      const rounds = 200;
      const started = performance.now();
      for (let i = 0; i < rounds; i++) await signPdf(pdf, keyCase.key, { signerName: "figure", signingTime: new Date() });
      const seconds = (performance.now() - started) / 1000;
      const figure = `signPdf, ${keyCase.name}, ${pages}-page PDF (${pdf.length} bytes): ${(rounds / seconds).toFixed(0)} PDFs/s (${rounds} in ${seconds.toFixed(2)} s)`;
      t.diagnostic(figure);
    }
  });
});
