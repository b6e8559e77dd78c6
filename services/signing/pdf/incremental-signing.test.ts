/**
 * Signing by incremental update on the cross-reference layouts real files
 * have (qpdf writes them: object streams with PNG-predicted xref streams,
 * linearized files, classic tables, a damaged table), and the modification
 * analysis of /v1/verify on later revisions that are not permitted.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { PDFDocument, PDFHexString, PDFName, PDFNumber, PDFRef } from "pdf-lib";
import { pdfsig } from "../../../test/support/pdf-validators.js";
import { textPdf } from "../../../test/support/pdf-fixtures.js";
import { loadOrCreateLocalKey } from "../keys/local-key.js";
import type { SigningKey } from "../keys/signing-key.js";
import { IncrementalUpdate } from "./incremental-update.js";
import { PdfFile } from "./pdf-file.js";
import { signPdf } from "./pdf-signer.js";
import { verifyPdfSignatures } from "./pdf-verifier.js";

const root = mkdtempSync(join(tmpdir(), "docservice-incremental-"));
after(() => rmSync(root, { recursive: true, force: true }));
const SIGNING_TIME = new Date("2026-01-02T03:04:05Z");

function qpdf(input: Buffer, args: string[]): Buffer {
  const source = join(root, `in-${Math.random()}.pdf`);
  const target = join(root, `out-${Math.random()}.pdf`);
  writeFileSync(source, input);
  const result = spawnSync("qpdf", [...args, source, target], { encoding: "utf8" });
  assert.ok(result.status === 0 || result.status === 3, `qpdf ${args.join(" ")}: ${result.stderr}`);
  return readFileSync(target);
}

async function checked(pdf: Buffer, name: string) {
  const path = join(root, `${name}.pdf`);
  writeFileSync(path, pdf);
  const check = spawnSync("qpdf", ["--check", path], { encoding: "utf8" });
  assert.equal(check.status, 0, `qpdf --check ${name}: ${check.stdout}${check.stderr}`);
  return pdfsig(path);
}

describe("incremental signing", () => {
  let key: SigningKey;
  before(async () => {
    key = await loadOrCreateLocalKey(join(root, "key"));
  });

  const layouts: [string, string[]][] = [
    ["object streams (PNG-predicted xref stream)", ["--object-streams=generate"]],
    ["linearized", ["--linearize"]],
    ["classic table", ["--object-streams=disable"]],
  ];
  for (const [name, args] of layouts) {
    test(`${name}: signed and countersigned, the original bytes kept, both valid, qpdf --check clean`, async () => {
      const original = qpdf(await textPdf(3), args);
      const once = await signPdf(original, key, { signerName: "one", signingTime: SIGNING_TIME });
      const twice = await signPdf(once, key, { signerName: "two", signingTime: SIGNING_TIME });
      assert.ok(twice.subarray(0, original.length).equals(original));
      const result = await checked(twice, name.replace(/\W+/g, "-"));
      assert.deepEqual(result.signatures.map((signature) => signature.valid), [true, true], result.raw);
    });
  }

  test("a damaged cross-reference table: the objects are found by a scan and the update lists them all", async () => {
    const original = qpdf(await textPdf(2), ["--object-streams=disable"]);
    const text = original.toString("latin1");
    const xref = text.lastIndexOf("\nxref");
    // every offset in the table shifted by one digit: no entry points at its object any more
    const damaged = Buffer.from(text.slice(0, xref) + text.slice(xref).replace(/(\d{10}) (\d{5}) n/g, (_, offset: string, generation: string) => `${String(Number(offset) + 7).padStart(10, "0")} ${generation} n`), "latin1");
    assert.ok(PdfFile.open(damaged).rebuilt, "the reader falls back to a scan");
    const signed = await signPdf(damaged, key, { signerName: "x", signingTime: SIGNING_TIME });
    const result = await checked(signed, "damaged");
    assert.equal(result.signatures[0]?.valid, true, result.raw);
  });

  test("an indirect /Annots array: a signature widget may join it later, a link annotation may not", async () => {
    const document = await PDFDocument.create();
    const page = document.addPage([300, 300]);
    page.node.set(PDFName.of("Annots"), document.context.register(document.context.obj([])));
    const signed = await signPdf(Buffer.from(await document.save()), key, { signerName: "one", signingTime: SIGNING_TIME });
    const countersigned = await signPdf(signed, key, { signerName: "two", signingTime: SIGNING_TIME });
    const both = await verifyPdfSignatures(countersigned);
    assert.deepEqual(both.signers.map((signer) => signer.laterChangesPermitted), [true, true], both.reason);

    const file = PdfFile.open(countersigned);
    const pageRef = file.resolveArray(file.resolveDict(file.catalog().get(PDFName.of("Pages")))!.get(PDFName.of("Kids")))!.get(0) as PDFRef;
    const annotsRef = file.resolveDict(pageRef)!.get(PDFName.of("Annots")) as PDFRef;
    assert.ok(annotsRef instanceof PDFRef, "the page's /Annots stayed indirect");
    const update = new IncrementalUpdate(file);
    const link = update.add(file.context.obj({ Type: "Annot", Subtype: "Link", Rect: [0, 0, 10, 10] }));
    update.set(annotsRef, file.context.obj([...file.resolveArray(annotsRef)!.asArray(), link]));
    const linked = await verifyPdfSignatures(Buffer.concat([countersigned, update.serialize().bytes]));
    assert.deepEqual(linked.signers.map((signer) => signer.laterChangesPermitted), [false, false]);
    assert.match(linked.signers[1]!.problem ?? "", /other than a signature field/);
  });

  test("later revisions that add a page or change the document information are not permitted changes", async () => {
    const signed = await signPdf(await textPdf(1), key, { signerName: "x", signingTime: SIGNING_TIME });
    assert.equal((await verifyPdfSignatures(signed)).signers[0]!.laterChangesPermitted, true);

    const file = PdfFile.open(signed);
    const withPage = new IncrementalUpdate(file);
    const pagesRef = file.catalog().get(PDFName.of("Pages")) as PDFRef;
    const pages = file.resolveDict(pagesRef)!.clone(file.context);
    const page = withPage.add(file.context.obj({ Type: "Page", Parent: pagesRef, MediaBox: [0, 0, 200, 200] }));
    pages.set(PDFName.of("Kids"), file.context.obj([...file.resolveArray(pages.get(PDFName.of("Kids")))!.asArray(), page]));
    pages.set(PDFName.of("Count"), PDFNumber.of(2));
    withPage.set(pagesRef, pages);
    const added = await verifyPdfSignatures(Buffer.concat([signed, withPage.serialize().bytes]));
    assert.equal(added.valid, false);
    assert.deepEqual([added.signers[0]!.laterChangesPermitted, added.signers[0]!.indication, added.signers[0]!.subIndication], [false, "TOTAL-FAILED", "FORMAT_FAILURE"]);
    assert.match(added.reason, /modified after signature 1/);

    const withInfo = new IncrementalUpdate(file);
    const infoRef = file.trailer.get(PDFName.of("Info"));
    const info = file.context.obj({ Title: PDFHexString.fromText("changed after signing") });
    if (infoRef instanceof PDFRef) withInfo.set(infoRef, info);
    else withInfo.setTrailer("Info", withInfo.add(info));
    const retitled = await verifyPdfSignatures(Buffer.concat([signed, withInfo.serialize().bytes]));
    if (infoRef instanceof PDFRef) {
      assert.equal(retitled.signers[0]!.laterChangesPermitted, false, retitled.reason);
    }
  });
});
