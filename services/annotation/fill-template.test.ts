import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { strFromU8, unzipSync } from "fflate";
import { AnnotationField } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { contractTemplate, inlineText, paragraph, plainTable, solidPng, templateDocx } from "../../test/support/docx-templates.js";
import { ServiceError } from "../core/errors.js";
import { DocxPackage } from "./docx-package.js";
import { fillTemplate } from "./fill-template.js";

const template = contractTemplate;

const field = (f: Partial<AnnotationField>): AnnotationField => ({ ...AnnotationField.fromPartial({}), ...f });

function filled(fields: AnnotationField[]): Record<string, string> {
  const docx = DocxPackage.open(template());
  fillTemplate(docx, fields);
  const parts = unzipSync(new Uint8Array(docx.toBuffer()));
  return Object.fromEntries(Object.entries(parts).map(([name, bytes]) => [name, name.endsWith(".png") ? `png:${bytes.length}` : strFromU8(bytes)]));
}

function rejection(fields: AnnotationField[]): ServiceError {
  try {
    fillTemplate(DocxPackage.open(template()), fields);
  } catch (error) {
    assert.ok(error instanceof ServiceError);
    return error;
  }
  assert.fail("filled");
}

describe("fillTemplate", () => {
  test("text by tag, inline and around a paragraph; by title in the body and the header; lines; the placeholder flag gone", () => {
    const parts = filled([
      field({ id: "customer", type: "text", value: "Ada Lovelace" }),
      field({ id: "terms", type: "text", value: "Net 30.\nNo refunds." }),
      field({ group: "place", type: "text", value: "Zürich & <Basel>" }),
    ]);
    const body = parts["word/document.xml"];
    assert.match(body, /<w:t xml:space="preserve">Ada Lovelace<\/w:t>/);
    assert.doesNotMatch(body, /Click to enter the name|Terms go here|>city</);
    assert.match(body, /<w:jc w:val="center"\/><\/w:pPr><w:r><w:t xml:space="preserve">Net 30\.<\/w:t><\/w:r><\/w:p><w:p><w:pPr><w:jc w:val="center"\/><\/w:pPr><w:r><w:t xml:space="preserve">No refunds\./);
    assert.match(body, /Zürich &amp; &lt;Basel&gt;/);
    assert.match(parts["word/header1.xml"], /Zürich &amp; &lt;Basel&gt;/);
    assert.equal((body.match(/showingPlcHdr/g) ?? []).length, 2, "the picture and table controls, not filled, keep theirs");
  });

  test("controls inside table cells and in the footer fill too", () => {
    const docx = DocxPackage.open(
      templateDocx(plainTable(paragraph("Total: ", inlineText("total", "0", 1)), paragraph(inlineText("", "when", 2, "date"))), {
        footer: paragraph("Page footer, ", inlineText("", "when", 3, "date")),
      }),
    );
    fillTemplate(docx, [field({ id: "total", type: "text", value: "1,350" }), field({ group: "date", type: "text", value: "25 November 2026" })]);
    const parts = unzipSync(new Uint8Array(docx.toBuffer()));
    const body = strFromU8(parts["word/document.xml"]);
    assert.match(body, /<w:tc>.*Total: .*1,350.*<\/w:tc><w:tc>.*25 November 2026.*<\/w:tc>/s);
    assert.match(strFromU8(parts["word/footer1.xml"]), /Page footer, .*25 November 2026/s);
  });

  test("keepTextNodeStyles keeps the template run's style without its placeholder style", () => {
    const kept = filled([field({ id: "customer", type: "text", value: "Ada", keepTextNodeStyles: true })])["word/document.xml"];
    assert.match(kept, /<w:r><w:rPr><w:b\/><\/w:rPr><w:t xml:space="preserve">Ada<\/w:t>/);
    const plain = filled([field({ id: "customer", type: "text", value: "Ada" })])["word/document.xml"];
    assert.match(plain, /<w:r><w:t xml:space="preserve">Ada<\/w:t>/);
  });

  test("an image: a new media part, related, content type known, sized to the control's box or to the dimensions", () => {
    const png = solidPng(300, 100, [0, 0, 255]);
    const parts = filled([field({ id: "signature", type: "signature", value: `data:image/png;base64,${png.toString("base64")}` })]);
    assert.equal(parts["word/media/annotated-1.png"], `png:${png.length}`);
    assert.match(parts["word/_rels/document.xml.rels"], /Id="rIdAnnotated1"[^>]*Target="media\/annotated-1\.png"/);
    assert.match(parts["word/document.xml"], /<a:blip r:embed="rIdAnnotated1"\/>/);
    // 300×100 fitted into 1905000×952500 EMU: the width bounds it
    assert.match(parts["word/document.xml"], /<wp:extent cx="1905000" cy="635000"\/>/);
    const sized = filled([field({ id: "signature", type: "image", value: png.toString("base64"), width: 150, height: 50 })]);
    assert.match(sized["word/document.xml"], /<wp:extent cx="1428750" cy="476250"\/>.*<a:ext cx="1428750" cy="476250"\/>/s);
  });

  test("a signature drawn from the name: a PNG as wide as the name, with its labels, fitted in the control", () => {
    const short = filled([field({ id: "signature", type: "signature", signerName: "Al" })]);
    const long = filled([field({ id: "signature", type: "signature", signerName: "Ada Augusta King, Countess of Lovelace", topLabel: "Signed by", bottomLabel: "2026-11-25" })]);
    const size = (parts: Record<string, string>) => {
      const [, cx, cy] = /<wp:extent cx="(\d+)" cy="(\d+)"\/>/.exec(parts["word/document.xml"])!.map(Number);
      return { bytes: Number(parts["word/media/annotated-1.png"].slice(4)), ratio: cx / cy };
    };
    assert.ok(size(long).ratio > 2 * size(short).ratio, "the longer name is not drawn wider");
    assert.ok(size(long).bytes > size(short).bytes);
  });

  test("a table grows by the rows: copies of its last row's style, or plain rows", () => {
    const styled = filled([field({ id: "items", type: "table", rows: [{ cells: ["apples", "12"] }, { cells: ["pears"] }], copyRowStyle: true })])["word/document.xml"];
    assert.equal((styled.match(/<w:tr>/g) ?? []).length, 4);
    assert.match(styled, /<w:i\/><w:color w:val="C00000"\/><\/w:rPr><w:t xml:space="preserve">apples</);
    const plain = filled([field({ id: "items", type: "table", rows: [{ cells: ["apples", "12"] }] })])["word/document.xml"];
    assert.match(plain, /<w:tc><w:tcPr><w:tcW w:w="2400" w:type="dxa"\/><\/w:tcPr><w:p><w:r><w:t xml:space="preserve">apples</);
  });

  test("every problem at once, nothing filled: unknown tags and titles, wrong types, a bad image, a row too wide (422); a malformed field (400)", () => {
    const error = rejection([
      field({ id: "nobody", type: "text", value: "x" }),
      field({ group: "nowhere", type: "text", value: "x" }),
      field({ id: "signature", type: "text", value: "x" }),
      field({ id: "customer", type: "image", value: solidPng(2, 2, [0, 0, 0]).toString("base64") }),
      field({ id: "agreed", type: "text", value: "x" }),
      field({ id: "signature", type: "image", value: Buffer.from("GIF89a not a png").toString("base64") }),
      field({ id: "terms", type: "table", rows: [{ cells: ["a"] }] }),
    ]);
    assert.equal(error.code, "UNPROCESSABLE_DOCUMENT");
    assert.deepEqual(
      error.details?.map((d) => d.field),
      ["fields[0].id", "fields[1].group", "fields[2].type", "fields[3].type", "fields[4].type", "fields[5].value", "fields[6].type"],
    );
    assert.match(error.details![0].issue, /the template has tag "customer", tag "terms", title "place", tag "signature", tag "items", tag "agreed"/);

    const wide = rejection([field({ id: "items", type: "table", rows: [{ cells: ["a", "b", "c"] }] })]);
    assert.match(wide.details![0].issue, /row 0 has 3 cells, and the table .* has 2 columns/);

    const malformed = rejection([
      field({ type: "text", value: "x" }),
      field({ id: "a", group: "b", type: "colour" }),
      field({ id: "signature", type: "signature", value: "x", signerName: "Ada" }),
      field({ id: "customer", type: "text", value: "x", topLabel: "Signed by" }),
    ]);
    assert.equal(malformed.code, "VALIDATION_ERROR");
    assert.deepEqual(malformed.details?.map((d) => d.field), ["fields[0]", "fields[1]", "fields[1].type", "fields[2].value", "fields[3].options"]);
  });
});
