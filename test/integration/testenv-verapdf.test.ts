// Self-test of the PDF/A validator of the test environment (scripts/testenv/verapdf.sh,
// test/support/verapdf.ts) on PDFs LibreOffice exports from one DOCX: as PDF/A-2b,
// which veraPDF must accept, and as a plain PDF, which it must reject by rule.
import assert from "node:assert/strict";
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { makeDocx } from "../support/docx-fixtures.js";
import { tool } from "../support/pdf-tools.js";
import { describePdfAResult, validateMany, validatePdfA, type PdfAResult } from "../support/verapdf.js";

const PDFA2_FILTER = 'pdf:writer_pdf_Export:{"SelectPdfVersion":{"type":"long","value":"2"}}';

/** `soffice --convert-to FILTER`: the PDF of DOCX, written into DIRECTORY as NAME.pdf. */
async function convert(docx: Buffer, name: string, filter: string, directory: string): Promise<string> {
  const input = join(directory, `${name}.docx`);
  await writeFile(input, docx);
  const args = ["--headless", "--norestore", `-env:UserInstallation=${pathToFileURL(join(directory, "profile")).href}`];
  const result = await tool("soffice", [...args, "--convert-to", filter, "--outdir", directory, input]);
  assert.equal(result.code, 0, `soffice --convert-to ${filter}: ${result.stderr}`);
  return join(directory, `${name}.pdf`);
}

function rules(result: PdfAResult): string[] {
  return result.failures.map((failure) => failure.rule);
}

describe("veraPDF", () => {
  let directory: string;
  let pdfA: string;
  let plain: string;

  before(async () => {
    directory = await mkdtemp(join(tmpdir(), "docservice-testenv-verapdf-"));
    const docx = makeDocx(["veraPDF self-test", "A second paragraph with ümlauts and €."]);
    pdfA = await convert(docx, "pdfa", PDFA2_FILTER, directory);
    plain = await convert(docx, "plain", "pdf", directory);
  });

  after(async () => {
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  test("accepts LibreOffice's PDF/A-2b export as PDF/A-2b", async (t) => {
    const started = Date.now();
    const result = await validatePdfA(pdfA, "2b");
    t.diagnostic(`1 file validated in ${Date.now() - started} ms`);
    assert.equal(result.compliant, true, describePdfAResult(result));
    assert.deepEqual(result.failures, []);
    assert.equal(result.error, null);
    assert.equal(result.profile, "PDF/A-2B validation profile");
  });

  test("rejects a plain PDF export with named PDF/A-2 rules", async () => {
    // Given as bytes: validatePdfA writes them to a file of its own.
    const result = await validatePdfA(await readFile(plain), "2b");
    assert.equal(result.compliant, false, describePdfAResult(result));
    assert.equal(result.error, null);
    // 6.6.2.1-1: the catalog has no XMP metadata stream (so no PDF/A identification either).
    const metadata = result.failures.find((failure) => failure.rule === "6.6.2.1-1");
    assert.ok(metadata, `no rule 6.6.2.1-1 in:\n${describePdfAResult(result)}`);
    assert.equal(metadata.specification, "ISO 19005-2:2011");
    assert.match(metadata.description, /Metadata/);
    assert.ok(metadata.failedChecks >= 1);
    assert.equal(metadata.context, "root/document[0]");
    assert.ok(metadata.message);
  });

  test("holds the PDF/A-2b file to the flavour asked for: PDF/A-3b and PDF/UA-1 fail", async () => {
    const [asPart3] = await validateMany([pdfA], "3b");
    assert.equal(asPart3!.compliant, false);
    // 6.6.4-2: pdfaid:part must be 3; LibreOffice wrote 2.
    assert.deepEqual(rules(asPart3!), ["6.6.4-2"], describePdfAResult(asPart3!));

    // LibreOffice exports untagged by default; PDF/UA-1 needs a structure tree.
    const asUa = await validatePdfA(pdfA, "ua1");
    assert.equal(asUa.compliant, false);
    assert.equal(asUa.profile, "PDF/UA-1 validation profile");
    assert.ok(asUa.failures.every((failure) => failure.specification === "ISO 14289-1:2014"), describePdfAResult(asUa));
  });

  test("validateMany: 20 files in one run, results in input order", async (t) => {
    const files: string[] = [];
    for (let i = 0; i < 20; i++) {
      // A file name without .pdf: the helper passes --nonpdfext, so veraPDF still takes it.
      const file = join(directory, i % 2 === 0 ? `batch-${i}.pdf` : `batch-${i}.bin`);
      await copyFile(i % 2 === 0 ? pdfA : plain, file);
      files.push(file);
    }
    const started = Date.now();
    const results = await validateMany(files, "2b");
    t.diagnostic(`20 files validated in ${Date.now() - started} ms`);
    assert.deepEqual(
      results.map((result) => result.file),
      files,
    );
    assert.deepEqual(
      results.map((result) => result.compliant),
      files.map((_, i) => i % 2 === 0),
    );
    for (const result of results.filter((_, i) => i % 2 === 1)) assert.ok(rules(result).includes("6.6.2.1-1"));
  });

  test("a file that is not a PDF gets an error, not a verdict; a missing path rejects", async () => {
    const bogus = join(directory, "bogus.pdf");
    await writeFile(bogus, "not a PDF\n");
    const [broken, good] = await validateMany([bogus, pdfA], "2b");
    assert.equal(broken!.compliant, false);
    assert.match(broken!.error ?? "", /^PARSE: /);
    assert.equal(good!.compliant, true);

    await assert.rejects(validateMany([join(directory, "missing.pdf")], "2b"), /ENOENT/);
    await assert.rejects(validateMany([directory], "2b"), /is not a file/);
  });
});
