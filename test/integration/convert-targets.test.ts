// /v1/convert's outputs beyond a plain PDF, in embedded mode with the local
// LibreOffice pool, judged by veraPDF (PDF/A, PDF/UA) and by reading the DOCX
// written: every corpus DOCX as PDF/A-2b, PDF/A-3b and PDF/UA, a PDF/A-2b
// signed by /v1/sign, DOCX from the other formats, and the rules of the
// parameters.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import { CORPUS_DIR, corpusDocxPaths, corpusFile } from "../support/corpus.js";
import { docxFileText } from "../support/docx-text.js";
import { pdfText } from "../support/pdf-tools.js";
import { convertFile, startPlatform, type Platform } from "../support/platform.js";
import { writtenByLibreOffice } from "../support/written-by-libreoffice.js";
import { postJson, signBody, signedPdfOf } from "../support/sign-requests.js";
import { describePdfAResult, validateMany, validatePdfA } from "../support/verapdf.js";

const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

describe("POST /v1/convert: PDF/A, PDF/UA and DOCX output", () => {
  let platform: Platform;
  let scratch: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), "docservice-convert-targets-"));
    platform = await startPlatform({ CONVERSION_POOL_SIZE: "2" });
  });

  after(async () => {
    await platform?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("every corpus DOCX with pdfa=2b: veraPDF's PDF/A-2B profile passes, or the answer is the same 4xx a plain conversion gets", async () => {
    const files = corpusDocxPaths();
    const converted: { name: string; path: string }[] = [];
    const refused: string[] = [];
    const convertOne = async (file: string) => {
      const name = relative(CORPUS_DIR, file);
      const bytes = readFileSync(file);
      const response = await convertFile(platform, bytes, "document.docx", "docx", { pdfa: "2b" });
      if (response.status === 200) {
        const path = join(scratch, `${converted.length}-${refused.length}-${name.replaceAll("/", "_")}.pdf`);
        writeFileSync(path, Buffer.from(await response.arrayBuffer()));
        converted.push({ name, path });
        return;
      }
      const body = (await response.json()) as { code: string; message: string };
      assert.ok(response.status >= 400 && response.status < 500, `${name}: ${response.status} ${body.message}`);
      const plain = await convertFile(platform, bytes, "document.docx", "docx");
      assert.equal(plain.status, response.status, `${name}: refused as PDF/A (${body.message}) but not as a plain PDF`);
      refused.push(name);
    };
    // two at a time: one per LibreOffice instance
    const queue = [...files];
    await Promise.all([0, 1].map(async () => {
      for (let file = queue.shift(); file; file = queue.shift()) await convertOne(file);
    }));
    assert.ok(converted.length >= 90, `only ${converted.length} of ${files.length} converted`);
    const verdicts = await validateMany(converted.map((c) => c.path), "2b");
    const failed = verdicts.flatMap((verdict, i) => (verdict.compliant ? [] : [`${converted[i].name}: ${describePdfAResult(verdict)}`]));
    assert.deepEqual(failed, [], failed.join("\n"));
    console.log(`PDF/A-2b: ${converted.length} of ${files.length} corpus documents converted, every one compliant; ${refused.length} refused as damaged, encrypted or not DOCX`);
  });

  test("pdfa=3b passes PDF/A-3B; pdfua=true passes PDF/UA-1, or is a 422 when the document has no title; pdfa with pdfua is a 400 here", async () => {
    const pdfa3 = await convertFile(platform, corpusFile("word_tables.docx"), "tables.docx", "docx", { pdfa: "3b" });
    assert.equal(pdfa3.status, 200);
    const verdict3 = await validatePdfA(Buffer.from(await pdfa3.arrayBuffer()), "3b");
    assert.ok(verdict3.compliant, describePdfAResult(verdict3));

    // bookmarks.docx has a title (docProps/core.xml), which PDF/UA requires
    const titled = await convertFile(platform, corpusFile("bookmarks.docx"), "bookmarks.docx", "docx", { pdfua: "true" });
    assert.equal(titled.status, 200);
    const pdf = Buffer.from(await titled.arrayBuffer());
    assert.match(pdf.toString("latin1"), /\/StructTreeRoot/);
    const ua = await validatePdfA(pdf, "ua1");
    assert.ok(ua.compliant, describePdfAResult(ua));

    const untitled = await convertFile(platform, corpusFile("word_tables.docx"), "tables.docx", "docx", { pdfua: "true" });
    assert.equal(untitled.status, 422);
    assert.match(((await untitled.json()) as { message: string }).message, /PDF\/UA needs a document title/);

    const both = await convertFile(platform, corpusFile("bookmarks.docx"), "bookmarks.docx", "docx", { pdfua: "true", pdfa: "2b" });
    assert.equal(both.status, 400);
    assert.deepEqual(((await both.json()) as { details: Array<{ field: string }> }).details.map((d) => d.field), ["pdfua"]);
  });

  test("a PDF/A-2b signed by /v1/sign (certificate page appended) is still PDF/A-2b", async () => {
    const response = await convertFile(platform, corpusFile("word_tables.docx"), "tables.docx", "docx", { pdfa: "2b" });
    assert.equal(response.status, 200);
    const archived = Buffer.from(await response.arrayBuffer());
    const signed = signedPdfOf(await postJson(platform.base, "/v1/sign", signBody(archived), platform.apiKey));
    assert.ok(signed.length > archived.length);
    assert.ok(signed.subarray(0, archived.length).equals(archived), "signing rewrote the archived bytes");
    const verdict = await validatePdfA(signed, "2b");
    assert.ok(verdict.compliant, describePdfAResult(verdict));
  });

  test("to=docx from html, md, rtf and txt: a DOCX holding the text; md to PDF renders its table", async () => {
    const explicitPdf = await convertFile(platform, corpusFile("word_tables.docx"), "tables.docx", "docx", { to: "pdf" });
    assert.equal(explicitPdf.headers.get("content-type"), "application/pdf");
    const sources: Array<[string, Buffer, RegExp]> = [
      ["html", Buffer.from("<!doctype html><html><body><h1>Heading in HTML</h1><table><tr><td>cell one</td><td>cell two</td></tr></table></body></html>"), /Heading in HTML[\s\S]*cell one[\s\S]*cell two/],
      ["md", Buffer.from("# Heading in Markdown\n\n| Name | Amount |\n|---|---|\n| apples | 12 |\n\nSome *emphasis* here.\n"), /Heading in Markdown[\s\S]*apples[\s\S]*12[\s\S]*emphasis/],
      ["rtf", Buffer.from("{\\rtf1\\ansi{\\fonttbl\\f0\\fswiss Helvetica;}\\f0\\pard Rich text to Word.\\par}"), /Rich text to Word\./],
      ["txt", Buffer.from("Plain text to Word.\nSecond line.\n"), /Plain text to Word\.[\s\S]*Second line\./],
    ];
    for (const [from, bytes, text] of sources) {
      const response = await convertFile(platform, bytes, `sample.${from}`, from, { to: "docx" });
      assert.equal(response.status, 200, `${from}: ${response.status === 200 ? "" : await response.text()}`);
      assert.equal(response.headers.get("content-type"), DOCX_TYPE);
      assert.match(response.headers.get("content-disposition") ?? "", /^attachment; filename="?sample\.docx"?$/);
      assert.equal(response.headers.get("x-page-count"), null);
      assert.match(docxFileText(Buffer.from(await response.arrayBuffer())), text, from);
    }

    const markdownPdf = await convertFile(platform, sources[1][1], "notes.md", "md");
    assert.equal(markdownPdf.status, 200);
    const pdfPath = join(scratch, "notes.pdf");
    writeFileSync(pdfPath, Buffer.from(await markdownPdf.arrayBuffer()));
    const text = await pdfText(pdfPath);
    assert.match(text, /Heading in Markdown/);
    assert.doesNotMatch(text, /\|---\|/, "the table was printed as Markdown source");
  });

  test("ODT and DOC to DOCX (LibreOffice's own round trips of a corpus document)", async () => {
    const docx = corpusFile("word_tables.docx");
    const words = /[A-Za-z]{4,}/.exec(docxFileText(docx))![0];
    // A DOC and an ODT of the same document, written by LibreOffice from the DOCX: to=docx must bring the text back.
    for (const [from, filter] of [["odt", "odt"], ["doc", "doc:MS Word 97"]] as const) {
      const response = await convertFile(platform, await writtenByLibreOffice(docx, from, filter), `roundtrip.${from}`, from, { to: "docx" });
      assert.equal(response.status, 200, `${from}: ${response.status === 200 ? "" : await response.text()}`);
      assert.ok(docxFileText(Buffer.from(await response.arrayBuffer())).includes(words), `${from}: "${words}" is missing from the DOCX`);
    }
  });

  test("invalid targets: 400 naming every parameter at fault", async () => {
    const docx = corpusFile("word_tables.docx");
    const cases: Array<[Record<string, string>, string[]]> = [
      [{ to: "xlsx" }, ["to"]],
      [{ pdfa: "1b" }, ["pdfa"]],
      [{ pdfua: "yes" }, ["pdfua"]],
      [{ to: "docx" }, ["to"]],
      [{ to: "docx", pdfa: "2b", pdfua: "true" }, ["to", "pdfa", "pdfua"]],
    ];
    for (const [options, fields] of cases) {
      const response = await convertFile(platform, docx, "a.docx", "docx", options);
      assert.equal(response.status, 400, JSON.stringify(options));
      const body = (await response.json()) as { code: string; details: Array<{ field: string }> };
      assert.equal(body.code, "VALIDATION_ERROR");
      assert.deepEqual(body.details.map((d) => d.field).sort(), fields.sort(), JSON.stringify(options));
    }
  });
});
