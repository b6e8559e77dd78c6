import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { PDFArray, PDFDict, PDFDocument, PDFName, StandardFonts } from "pdf-lib";
import { ServiceError } from "../../core/errors.js";
import { runOpenssl } from "../../../test/support/openssl.js";
import { pyhankoValidate } from "../../../test/support/pdf-validators.js";
import { LOCAL_CERTIFICATE_FILE, loadOrCreateLocalKey } from "../keys/local-key.js";
import { DEFAULT_CONTENTS_RESERVATION_BYTES, signPdf } from "./pdf-signer.js";
import type { SigningKey } from "../keys/signing-key.js";

const root = mkdtempSync(join(tmpdir(), "docservice-pdf-signer-"));
after(() => rmSync(root, { recursive: true, force: true }));

const SIGNING_TIME = new Date("2025-03-04T05:06:07Z");

async function onePagePdf(text = "A contract worth signing."): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage([595, 842]).drawText(text, { x: 72, y: 760, size: 14, font });
  return Buffer.from(await document.save());
}

interface SignedParts {
  byteRange: [number, number, number, number];
  cms: Buffer;
  /** The bytes the /ByteRange covers, concatenated. */
  signedBytes: Buffer;
}

/** Reads the (single) /ByteRange and the DER CMS in /Contents of a signed PDF. */
function signedParts(pdf: Buffer): SignedParts {
  const text = pdf.toString("latin1");
  const matches = [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)];
  assert.equal(matches.length, 1, "exactly one /ByteRange");
  const byteRange = matches[0]!.slice(1, 5).map(Number) as SignedParts["byteRange"];
  const [start, length, second, secondLength] = byteRange;
  const hex = pdf.subarray(start + length, second).toString("latin1");
  assert.match(hex, /^<[0-9a-f]+>$/i, "/Contents is the hex string between the two ranges");
  const contents = Buffer.from(hex.slice(1, -1), "hex");
  return {
    byteRange,
    cms: contents.subarray(0, derLength(contents)),
    signedBytes: Buffer.concat([pdf.subarray(start, start + length), pdf.subarray(second, second + secondLength)]),
  };
}

/** Total length (header included) of the DER element at the start of `der`. */
function derLength(der: Buffer): number {
  assert.equal(der[0], 0x30, "the CMS is a DER SEQUENCE");
  const first = der[1]!;
  if (first < 0x80) return 2 + first;
  const count = first & 0x7f;
  return 2 + count + der.subarray(2, 2 + count).readUIntBE(0, count);
}

function opensslVerify(directory: string, cms: Buffer, content: Buffer) {
  writeFileSync(join(directory, "sig.der"), cms);
  writeFileSync(join(directory, "content.bin"), content);
  return runOpenssl(
    ["cms", "-verify", "-binary", "-inform", "DER", "-in", "sig.der", "-content", "content.bin", "-noverify", "-out", "/dev/null"],
    directory,
  );
}

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => assert.fail("expected signPdf to refuse the document"),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof ServiceError, `a ServiceError, got ${String(error)}`);
  assert.equal(error.code, "UNPROCESSABLE_DOCUMENT");
  return error;
}

describe("signPdf", () => {
  const keys: { algorithm: "RSA-2048" | "ECDSA-P256"; key: SigningKey; directory: string }[] = [];

  before(async () => {
    for (const algorithm of ["RSA-2048", "ECDSA-P256"] as const) {
      const directory = join(root, algorithm);
      keys.push({ algorithm, key: await loadOrCreateLocalKey(directory, { algorithm }), directory });
    }
  });

  test("signs with a /ByteRange over the whole file except /Contents; openssl verifies the CMS", async () => {
    const original = await onePagePdf();
    for (const { algorithm, key, directory } of keys) {
      const signed = await signPdf(original, key, {
        signerName: "Zoë Ünal",
        reason: "Approval",
        location: "Brussels",
        contactInfo: "zoe@example.com",
        signingTime: SIGNING_TIME,
      });
      const { byteRange, cms, signedBytes } = signedParts(signed);
      const [start, length, second, secondLength] = byteRange;
      assert.equal(start, 0, `${algorithm}: the first range starts the file`);
      assert.equal(second + secondLength, signed.length, `${algorithm}: the second range ends the file`);
      assert.equal(second - length, 2 * DEFAULT_CONTENTS_RESERVATION_BYTES + 2, `${algorithm}: the hole is exactly <hex>`);

      const verified = opensslVerify(directory, cms, signedBytes);
      assert.equal(verified.status, 0, `${algorithm}: openssl cms -verify: ${verified.stderr}`);

      // one byte changed inside the signed range: the digest no longer matches
      const tampered = Buffer.from(signedBytes);
      tampered[Math.floor(tampered.length / 2)]! ^= 0x01;
      const broken = opensslVerify(directory, cms, tampered);
      assert.notEqual(broken.status, 0, `${algorithm}: a tampered document must not verify`);

      // the signature dictionary: PAdES SubFilter, /M, our text strings
      const reloaded = await PDFDocument.load(signed, { updateMetadata: false });
      assert.equal(reloaded.getPageCount(), 1);
      const field = reloaded.getForm().getFields();
      assert.equal(field.length, 1);
      assert.equal(field[0]!.getName(), "Signature1");
      const signature = field[0]!.acroField.dict.lookup(PDFName.of("V"));
      const text = signature?.toString() ?? "";
      assert.match(text, /\/SubFilter \/ETSI\.CAdES\.detached/);
      assert.match(text, /\/M \(D:20250304050607Z\)/);
      assert.doesNotMatch(text, /\/Reason \(\)/);
    }
  });

  test("keeps the pages and their content; optional entries are left out", async () => {
    const document = await PDFDocument.create();
    const font = await document.embedFont(StandardFonts.Helvetica);
    for (let page = 1; page <= 3; page++) document.addPage([300 + page, 400]).drawText(`page ${page}`, { x: 20, y: 20, font });
    const original = Buffer.from(await document.save());
    const signed = await signPdf(original, keys[0]!.key, { signerName: "A. Signer", signingTime: SIGNING_TIME });
    const before = await PDFDocument.load(original);
    const after = await PDFDocument.load(signed);
    assert.deepEqual(
      after.getPages().map((page) => page.getWidth()),
      before.getPages().map((page) => page.getWidth()),
    );
    for (const [index, page] of after.getPages().entries()) {
      assert.equal(page.node.Contents()?.toString(), before.getPage(index).node.Contents()?.toString());
    }
    const text = signed.toString("latin1");
    assert.doesNotMatch(text, /\/Reason|\/Location|\/ContactInfo/);
  });

  test("keeps existing form fields and picks a free signature field name", async () => {
    const document = await PDFDocument.create();
    document.addPage();
    const form = document.getForm();
    form.createTextField("Signature1").setText("a text field that happens to have this name");
    form.createTextField("customer").setText("ACME");
    // an indirect /Fields array, which pdflibAddPlaceholder alone would replace by an empty one
    const acroForm = document.catalog.lookup(PDFName.of("AcroForm"), PDFDict);
    acroForm.set(PDFName.of("Fields"), document.context.register(acroForm.lookup(PDFName.of("Fields"), PDFArray)));
    const original = Buffer.from(await document.save());

    const { key, directory } = keys[0]!;
    const signed = await signPdf(original, key, { signerName: "x", signingTime: SIGNING_TIME });
    const names = (await PDFDocument.load(signed)).getForm().getFields().map((field) => field.getName());
    assert.deepEqual(names, ["Signature1", "customer", "Signature2"]);
    const { cms, signedBytes } = signedParts(signed);
    assert.equal(opensslVerify(directory, cms, signedBytes).status, 0);
  });

  test("concurrent signatures with one key are all valid", async () => {
    const { key, directory } = keys[1]!;
    const documents = await Promise.all(Array.from({ length: 8 }, (_, i) => onePagePdf(`document ${i}`)));
    const signed = await Promise.all(documents.map((pdf) => signPdf(pdf, key, { signerName: "x", signingTime: SIGNING_TIME })));
    for (const pdf of signed) {
      const { cms, signedBytes } = signedParts(pdf);
      assert.equal(opensslVerify(directory, cms, signedBytes).status, 0);
    }
  });

  test("a reservation too small for the CMS is an error naming both sizes", async () => {
    const error = await signPdf(await onePagePdf(), keys[0]!.key, {
      signerName: "x",
      signingTime: SIGNING_TIME,
      contentsReservationBytes: 1024,
    }).then(
      () => assert.fail("expected an error"),
      (caught: unknown) => caught as Error,
    );
    assert.match(error.message, /the signature is \d+ bytes but only 1024 bytes are reserved/);
  });

  test("countersigns by incremental update: the first revision is kept byte for byte and both signatures are valid", async () => {
    for (const useObjectStreams of [true, false]) {
      const document = await PDFDocument.create();
      document.addPage([595, 842]);
      const original = Buffer.from(await document.save({ useObjectStreams }));
      const [rsa, ecdsa] = keys;
      const first = await signPdf(original, rsa!.key, { signerName: "first", signingTime: SIGNING_TIME });
      const second = await signPdf(first, ecdsa!.key, { signerName: "second", signingTime: SIGNING_TIME });
      assert.ok(second.subarray(0, first.length).equals(first), "the signed revision is a prefix of the countersigned file");
      assert.ok(first.subarray(0, original.length).equals(original), "the original is a prefix of the signed file");
      const file = join(root, `countersigned-${useObjectStreams}.pdf`);
      writeFileSync(file, second);
      const pyhanko = await pyhankoValidate(file, [join(rsa!.directory, LOCAL_CERTIFICATE_FILE), join(ecdsa!.directory, LOCAL_CERTIFICATE_FILE)]);
      assert.equal(pyhanko.signatureCount, 2, pyhanko.raw);
      assert.ok(pyhanko.valid && pyhanko.intact && pyhanko.trusted, pyhanko.raw);
      assert.match(pyhanko.raw, /does not cover the entire file.\nAll modifications relate to signing and form filling operations/, pyhanko.raw);
      const names = (await PDFDocument.load(second)).getForm().getFields().map((field) => field.getName());
      assert.deepEqual(names, ["Signature1", "Signature2"]);
    }
  });

  test("refuses an encrypted PDF", async () => {
    const plain = join(root, "plain.pdf");
    const encrypted = join(root, "encrypted.pdf");
    writeFileSync(plain, await onePagePdf());
    const qpdf = spawnSync("qpdf", ["--encrypt", "user", "owner", "256", "--", plain, encrypted], { encoding: "utf8" });
    assert.equal(qpdf.error, undefined, "qpdf is installed (scripts/testenv/setup.sh)");
    assert.equal(qpdf.status, 0, qpdf.stderr);
    const error = await refusal(signPdf(await readFile(encrypted), keys[0]!.key, { signerName: "x", signingTime: SIGNING_TIME }));
    assert.match(error.message, /encrypted/);
  });

  test("refuses bytes that are not a PDF, and a truncated PDF", async () => {
    const options = { signerName: "x", signingTime: SIGNING_TIME };
    await refusal(signPdf(Buffer.from("this is not a PDF at all, just some text\n"), keys[0]!.key, options));
    await refusal(signPdf(Buffer.alloc(0), keys[0]!.key, options));
    const pdf = await onePagePdf();
    await refusal(signPdf(pdf.subarray(0, 200), keys[0]!.key, options));
  });
});
