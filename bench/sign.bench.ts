/**
 * bench:sign — signed documents/s of our signing pipeline next to the naive one (issue #4).
 *
 * One process, one document at a time ("on one core"), for a 1-page and a 20-page PDF:
 *   ours   signPdf by incremental update, appending the certificate page (signer + 5 events;
 *          PAdES B-B, CMS built by us), with the local key
 *          (node:crypto RSA-2048) and with SoftHSM2 (PKCS#11 RSA-2048, one session);
 *   naive  PDFDocument.load → a pdf-lib page with the same audit text in Helvetica →
 *          pdflibAddPlaceholder (default SubFilter) → save → a fresh P12Signer (it is single-use,
 *          and signs with node-forge's pure-JS RSA) → signpdf.sign. The anchor for both keys.
 * Every pipeline's output is checked once with poppler's pdfsig before anything is timed.
 * Figures are ratios measured in the same run (machines are shared and noisy).
 * POST /v1/sign over HTTP is measured by bench/sign-http.bench.ts, which `npm run bench:sign`
 * runs next, after installing what both need (scripts/testenv/setup.sh: SoftHSM2, OpenSC, poppler).
 */
import { X509Certificate, createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pdflibAddPlaceholder } from "@signpdf/placeholder-pdf-lib";
import { P12Signer } from "@signpdf/signer-p12";
import { SignPdf } from "@signpdf/signpdf";
import forge from "node-forge";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { appendCertificatePages, summarizeEvent, type CertificateAudit } from "../services/signing/certificate-page/certificate-page.js";
import type { AuditEvent } from "../services/signing/model.js";
import { LOCAL_CERTIFICATE_FILE, LOCAL_KEY_FILE, loadOrCreateLocalKey } from "../services/signing/keys/local-key.js";
import { signPdf } from "../services/signing/pdf/pdf-signer.js";
import { openPkcs11Key } from "../services/signing/keys/pkcs11/pkcs11-key.js";
import type { SigningKey } from "../services/signing/keys/signing-key.js";
import { pdfsig } from "../test/support/pdf-validators.js";
import { createSoftHsmToken } from "../test/support/softhsm.js";
import { textPdf } from "../test/support/pdf-fixtures.js";

/** Seconds each measurement should take (N is chosen from a warm-up to match). */
const TARGET_S = Number(process.env.BENCH_TARGET_S ?? 4);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 1);
const P12_PASSPHRASE = "bench";
const SIGNER = { name: "Jane Bench", email: "jane.bench@example.test", ip: "203.0.113.7", userAgent: "Mozilla/5.0 (bench)" };

type Pipeline = (input: Buffer) => Promise<Buffer>;

/** What the package's default export is (its CJS default does not type-check under NodeNext). */
const signpdf = new SignPdf();


function events(signedAt: Date): AuditEvent[] {
  const at = (seconds: number) => new Date(signedAt.getTime() - seconds * 1000);
  return [
    { type: "ready", timestamp: at(95) },
    { type: "scroll", timestamp: at(80), data: { percent: 100 } },
    { type: "field_change", timestamp: at(40), data: { fieldId: "fullName", value: SIGNER.name } },
    { type: "field_change", timestamp: at(30), data: { fieldId: "agree", value: "yes", previousValue: "no" } },
    { type: "submit", timestamp: at(1) },
  ];
}

function auditFor(input: Buffer, certificate: X509Certificate, signedAt: Date): CertificateAudit {
  const documentSha256 = createHash("sha256").update(input).digest("hex");
  return {
    documentId: `bench-${documentSha256.slice(0, 12)}`,
    documentSha256,
    signer: SIGNER,
    signedAt,
    certificate: { subject: certificate.subject, sha256Fingerprint: certificate.fingerprint256 },
    events: events(signedAt),
  };
}

function ourPipeline(key: SigningKey): Pipeline {
  const certificate = new X509Certificate(key.certificateDer);
  return async (input) => {
    const signedAt = new Date();
    const audit = auditFor(input, certificate, signedAt);
    return signPdf(input, key, {
      signerName: SIGNER.name,
      signingTime: signedAt,
      pages: async (document, size) => void (await appendCertificatePages(document, audit, size)),
    });
  };
}

/** The audit text as plain lines, for a standard (WinAnsi) font. */
function auditLines(audit: CertificateAudit): string[] {
  const ascii = (text: string) => text.replace(/[^\x20-\x7e]/g, "?");
  return [
    `Document ID: ${audit.documentId}`,
    `Document SHA-256: ${audit.documentSha256}`,
    `Signer: ${audit.signer.name} <${audit.signer.email}>`,
    `IP address: ${audit.signer.ip ?? ""}`,
    `User agent: ${audit.signer.userAgent ?? ""}`,
    `Signed at (UTC): ${audit.signedAt.toISOString()}`,
    `Certificate: ${ascii(audit.certificate.subject.replace(/\n/g, ", "))}`,
    `SHA-256 fingerprint: ${audit.certificate.sha256Fingerprint}`,
    `Audit trail: ${audit.events.length} events`,
    ...audit.events.map((e, i) => ascii(`${i + 1}  ${e.timestamp.toISOString()}  ${e.type}  ${summarizeEvent(e)}`)),
  ];
}

function naivePipeline(p12: Buffer, certificate: X509Certificate): Pipeline {
  return async (input) => {
    const signedAt = new Date();
    const document = await PDFDocument.load(input);
    const page = document.addPage();
    const font = await document.embedFont(StandardFonts.Helvetica);
    const bold = await document.embedFont(StandardFonts.HelveticaBold);
    page.drawText("Audit Trail Certificate", { x: 56, y: 780, size: 16, font: bold });
    auditLines(auditFor(input, certificate, signedAt)).forEach((line, i) =>
      page.drawText(line, { x: 56, y: 740 - i * 14, size: 8, font }),
    );
    pdflibAddPlaceholder({ pdfDoc: document, reason: "Signed", contactInfo: SIGNER.email, name: SIGNER.name, location: "" });
    const bytes = Buffer.from(await document.save());
    const signer = new P12Signer(p12, { passphrase: P12_PASSPHRASE }); // single-use: one per document
    return signpdf.sign(bytes, signer);
  };
}

/** A PKCS#12 (forge, 3DES) of the local key's PEM key and certificate. */
async function p12Of(keyDir: string): Promise<Buffer> {
  const privateKey = forge.pki.privateKeyFromPem(await readFile(join(keyDir, LOCAL_KEY_FILE), "utf8"));
  const certificate = forge.pki.certificateFromPem(await readFile(join(keyDir, LOCAL_CERTIFICATE_FILE), "utf8"));
  const asn1 = forge.pkcs12.toPkcs12Asn1(privateKey, [certificate], P12_PASSPHRASE, { algorithm: "3des" });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), "binary");
}

/** Signs once and checks the output with pdfsig: one valid signature covering the whole file. */
async function verifyOnce(name: string, pipeline: Pipeline, input: Buffer, dir: string): Promise<string> {
  const file = join(dir, `${name.replace(/\W+/g, "-")}.pdf`);
  writeFileSync(file, await pipeline(input));
  const result = await pdfsig(file);
  const [signature] = result.signatures;
  if (result.code !== 0 || result.signatures.length !== 1 || !signature?.valid || !signature.totalDocumentSigned) {
    throw new Error(`${name}: pdfsig does not accept the output (${file}):\n${result.raw}`);
  }
  return signature.signatureType ?? "?";
}

interface Measurement {
  name: string;
  docs: number;
  seconds: number;
  perSecond: number;
  msPerDoc: number;
}

async function runFor(pipeline: Pipeline, input: Buffer, count: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < count; i++) await pipeline(input);
  return (performance.now() - started) / 1000;
}

/** Warms up for WARMUP_S, then times N documents, N chosen to take about TARGET_S. */
async function measure(name: string, pipeline: Pipeline, input: Buffer): Promise<Measurement> {
  let warm = 0;
  const warmStart = performance.now();
  while (warm < 3 || performance.now() - warmStart < WARMUP_S * 1000) {
    await pipeline(input);
    warm++;
  }
  const estimate = warm / ((performance.now() - warmStart) / 1000);
  const docs = Math.max(5, Math.round(estimate * TARGET_S));
  const seconds = await runFor(pipeline, input, docs);
  const m = { name, docs, seconds, perSecond: docs / seconds, msPerDoc: (seconds * 1000) / docs };
  console.log(`  ${name.padEnd(18)} ${m.perSecond.toFixed(1).padStart(8)} docs/s  ${m.msPerDoc.toFixed(2).padStart(8)} ms/doc  (${docs} docs in ${seconds.toFixed(2)} s)`);
  return m;
}

const started = performance.now();
const dir = mkdtempSync(join(tmpdir(), "docservice-bench-sign-"));
// SOFTHSM2_CONF must be set before the PKCS#11 module is first initialised: token first
const token = await createSoftHsmToken();
const keys: SigningKey[] = [];
try {
  const keyDir = join(dir, "local-key");
  const localKey = await loadOrCreateLocalKey(keyDir, { algorithm: "RSA-2048" });
  keys.push(localKey);
  const hsmLabel = token.keys.find((key) => key.algorithm === "RSA-2048")!.label;
  const hsmKey = await openPkcs11Key({
    modulePath: token.modulePath,
    tokenLabel: token.tokenLabel,
    pin: token.userPin,
    keyLabel: hsmLabel,
    poolSize: 1,
  });
  keys.push(hsmKey);
  const p12 = await p12Of(keyDir);

  const inputs = { "1p": await textPdf(1), "20p": await textPdf(20) };
  const pipelines: Record<string, Pipeline> = {
    "our-local": ourPipeline(localKey),
    "our-softhsm": ourPipeline(hsmKey),
    naive: naivePipeline(p12, new X509Certificate(localKey.certificateDer)),
  };

  console.log("Output check (pdfsig -nocert, before timing)");
  for (const [name, pipeline] of Object.entries(pipelines)) {
    for (const [size, input] of Object.entries(inputs)) {
      const type = await verifyOnce(`${name} ${size}`, pipeline, input, dir);
      console.log(`  ${`${name} ${size}`.padEnd(18)} valid, total document signed, ${type}`);
    }
  }

  console.log(`Sequential, one document at a time, one process (~${TARGET_S} s per row after ${WARMUP_S} s warm-up)`);
  const results: Record<string, Measurement> = {};
  for (const size of ["1p", "20p"] as const) {
    for (const [name, pipeline] of Object.entries(pipelines)) {
      results[`${name} ${size}`] = await measure(`${name} ${size}`, pipeline, inputs[size]);
    }
  }
  const rate = (name: string) => results[name]!.perSecond;
  const cost = (name: string) => results[name]!.msPerDoc;

  console.log("");
  console.log("| pipeline    | 1 page docs/s | 20 pages docs/s | 20p/1p cost |");
  console.log("|-------------|---------------|-----------------|-------------|");
  for (const name of Object.keys(pipelines)) {
    console.log(
      `| ${name.padEnd(11)} | ${rate(`${name} 1p`).toFixed(1).padStart(13)} | ${rate(`${name} 20p`).toFixed(1).padStart(15)} | ` +
        `${(cost(`${name} 20p`) / cost(`${name} 1p`)).toFixed(2).padStart(10)}x |`,
    );
  }
  console.log("");

  const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");
  const goals: [string, number, boolean][] = [];
  for (const name of ["our-local", "our-softhsm"]) {
    const speedup = rate(`${name} 1p`) / rate("naive 1p");
    goals.push([`${name}/naive, 1 page (goal >= 10x)`, speedup, speedup >= 10]);
    const speedup20 = rate(`${name} 20p`) / rate("naive 20p");
    console.log(`  ${`${name}/naive, 20 pages`.padEnd(40)} ${speedup20.toFixed(1)}x`);
  }
  for (const name of ["our-local", "our-softhsm"]) {
    const ratio = cost(`${name} 20p`) / cost(`${name} 1p`);
    goals.push([`${name} 20p/1p cost (goal < 3x)`, ratio, ratio < 3]);
  }
  for (const [label, value, ok] of goals) console.log(`  ${label.padEnd(40)} ${value.toFixed(2)}x  ${verdict(ok)}`);
  console.log("");
  console.log(`Run time: ${((performance.now() - started) / 1000).toFixed(1)} s`);
} finally {
  for (const key of keys) await key.close();
  await token.cleanup();
  rmSync(dir, { recursive: true, force: true });
}
