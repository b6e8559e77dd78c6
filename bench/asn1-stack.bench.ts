/**
 * bench:asn1 — the two ASN.1 stacks the signing code uses, side by side on
 * the same bytes: node-forge (the CMS builder, the verifier, key files) and
 * asn1js/pkijs (LTV: OCSP, CRLs, the assessment). What verification and
 * signing do with them: read a CMS SignedData of our own signer (one signature,
 * a certificate and its chain; the verifier's path), read an X.509 certificate,
 * and write the DER of what was read. Microseconds per operation, best of
 * ROUNDS, and the ratio pkijs / forge. One of the two is to remain.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as asn1js from "asn1js";
import forge from "node-forge";
import * as pkijs from "pkijs";
import { buildCmsSignatureForDigest } from "../services/signing/cms/cms-signature.js";
import { loadOrCreateLocalKey } from "../services/signing/keys/local-key.js";
import { readSignedData } from "../services/signing/verification/signed-data.js";

const ROUNDS = 5;
const TARGET_MS = 300;

function timeUs(operation: () => unknown): number {
  for (let i = 0; i < 200; i++) operation();
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    let n = 0;
    const started = performance.now();
    while (performance.now() - started < TARGET_MS) {
      operation();
      n++;
    }
    best = Math.min(best, ((performance.now() - started) * 1000) / n);
  }
  return best;
}

const arrayBufferOf = (bytes: Buffer) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "docservice-bench-asn1-"));
  try {
    const key = await loadOrCreateLocalKey(dir);
    const cms = await buildCmsSignatureForDigest(key, createHash("sha256").update("document").digest());
    const certificate = key.certificateDer;
    const cmsBuffer = arrayBufferOf(cms);
    const certificateBuffer = arrayBufferOf(certificate);
    const rows: Array<[string, () => unknown, () => unknown]> = [
      [
        "read a CMS SignedData",
        () => forge.asn1.fromDer(cms.toString("binary")),
        () => new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(cmsBuffer).content }),
      ],
      [
        "read it as the verifier does",
        () => readSignedData(cms),
        () => {
          const signedData = new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(cmsBuffer).content });
          return [signedData.certificates, signedData.signerInfos[0].signedAttrs?.attributes, signedData.signerInfos[0].signature.valueBlock.valueHexView];
        },
      ],
      [
        "read an X.509 certificate",
        () => forge.pki.certificateFromAsn1(forge.asn1.fromDer(certificate.toString("binary"))),
        () => pkijs.Certificate.fromBER(certificateBuffer),
      ],
      [
        "write the DER of a parsed CMS",
        (() => {
          const parsed = forge.asn1.fromDer(cms.toString("binary"));
          return () => forge.asn1.toDer(parsed).getBytes();
        })(),
        (() => {
          const parsed = asn1js.fromBER(cmsBuffer).result;
          return () => parsed.toBER(false);
        })(),
      ],
    ];
    console.log(`ASN.1 stacks on our own CMS (${cms.length} bytes) and certificate (${certificate.length} bytes), µs per operation (best of ${ROUNDS})`);
    console.log("| operation | node-forge | asn1js/pkijs | pkijs / forge |");
    console.log("|---|---:|---:|---:|");
    for (const [name, forgeOperation, pkijsOperation] of rows) {
      const forgeUs = timeUs(forgeOperation);
      const pkijsUs = timeUs(pkijsOperation);
      console.log(`| ${name} | ${forgeUs.toFixed(1)} | ${pkijsUs.toFixed(1)} | ${(pkijsUs / forgeUs).toFixed(2)}× |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
