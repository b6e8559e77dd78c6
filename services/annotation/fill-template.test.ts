import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { strFromU8, unzipSync } from "fflate";
import { AnnotationField } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { contractTemplate, inlineText, paragraph, plainTable, solidPng, templateDocx } from "../../test/support/docx-templates.js";
import { ServiceError } from "../core/errors.js";
import { DocxPackage } from "./docx-package.js";
import { ANNOTATE_LIMITS } from "./annotate-request-schema.js";
import { fillTemplate } from "./fill-template.js";

const template = contractTemplate;

const field = (f: Partial<AnnotationField>): AnnotationField => ({ ...AnnotationField.fromPartial({}), ...f });

async function filled(fields: AnnotationField[]): Promise<Record<string, string>> {
  const docx = DocxPackage.open(template());
  await fillTemplate(docx, fields);
  const parts = unzipSync(new Uint8Array(docx.toBuffer()));
  return Object.fromEntries(Object.entries(parts).map(([name, bytes]) => [name, name.endsWith(".png") ? `png:${bytes.length}` : strFromU8(bytes)]));
}

async function rejection(fields: AnnotationField[]): Promise<ServiceError> {
  try {
    await fillTemplate(DocxPackage.open(template()), fields);
  } catch (error) {
    assert.ok(error instanceof ServiceError);
    return error;
  }
  assert.fail("filled");
}

describe("fillTemplate", () => {
  test("text by tag, inline and around a paragraph; by title in the body and the header; lines; the placeholder flag gone", async () => {
    const parts = await filled([
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

  test("controls inside table cells and in the footer fill too", async () => {
    const docx = DocxPackage.open(
      templateDocx(plainTable(paragraph("Total: ", inlineText("total", "0", 1)), paragraph(inlineText("", "when", 2, "date"))), {
        footer: paragraph("Page footer, ", inlineText("", "when", 3, "date")),
      }),
    );
    await fillTemplate(docx, [field({ id: "total", type: "text", value: "1,350" }), field({ group: "date", type: "text", value: "25 November 2026" })]);
    const parts = unzipSync(new Uint8Array(docx.toBuffer()));
    const body = strFromU8(parts["word/document.xml"]);
    assert.match(body, /<w:tc>.*Total: .*1,350.*<\/w:tc><w:tc>.*25 November 2026.*<\/w:tc>/s);
    assert.match(strFromU8(parts["word/footer1.xml"]), /Page footer, .*25 November 2026/s);
  });

  test("keepTextNodeStyles keeps the template run's style without its placeholder style", async () => {
    const kept = (await filled([field({ id: "customer", type: "text", value: "Ada", keepTextNodeStyles: true })]))["word/document.xml"];
    assert.match(kept, /<w:r><w:rPr><w:b\/><\/w:rPr><w:t xml:space="preserve">Ada<\/w:t>/);
    const plain = (await filled([field({ id: "customer", type: "text", value: "Ada" })]))["word/document.xml"];
    assert.match(plain, /<w:r><w:t xml:space="preserve">Ada<\/w:t>/);
  });

  test("an image: a new media part, related, content type known, sized to the control's box or to the dimensions", async () => {
    const png = solidPng(300, 100, [0, 0, 255]);
    const parts = await filled([field({ id: "signature", type: "signature", value: `data:image/png;base64,${png.toString("base64")}` })]);
    assert.equal(parts["word/media/annotated-1.png"], `png:${png.length}`);
    assert.match(parts["word/_rels/document.xml.rels"], /Id="rIdAnnotated1"[^>]*Target="media\/annotated-1\.png"/);
    assert.match(parts["word/document.xml"], /<a:blip r:embed="rIdAnnotated1"\/>/);
    // 300×100 fitted into 1905000×952500 EMU: the width bounds it
    assert.match(parts["word/document.xml"], /<wp:extent cx="1905000" cy="635000"\/>/);
    const sized = await filled([field({ id: "signature", type: "image", value: png.toString("base64"), width: 150, height: 50 })]);
    assert.match(sized["word/document.xml"], /<wp:extent cx="1428750" cy="476250"\/>.*<a:ext cx="1428750" cy="476250"\/>/s);
  });

  test("a signature drawn from the name: a PNG as wide as the name, with its labels, fitted in the control", async () => {
    const short = await filled([field({ id: "signature", type: "signature", signerName: "Al" })]);
    const long = await filled([field({ id: "signature", type: "signature", signerName: "Ada Augusta King, Countess of Lovelace", topLabel: "Signed by", bottomLabel: "2026-11-25" })]);
    const size = (parts: Record<string, string>) => {
      const [, cx, cy] = /<wp:extent cx="(\d+)" cy="(\d+)"\/>/.exec(parts["word/document.xml"])!.map(Number);
      return { bytes: Number(parts["word/media/annotated-1.png"].slice(4)), ratio: cx / cy };
    };
    assert.ok(size(long).ratio > 2 * size(short).ratio, "the longer name is not drawn wider");
    assert.ok(size(long).bytes > size(short).bytes);
  });

  test("a table grows by the rows: copies of its last row's style, or plain rows", async () => {
    const styled = (await filled([field({ id: "items", type: "table", rows: [{ cells: ["apples", "12"] }, { cells: ["pears"] }], copyRowStyle: true })]))["word/document.xml"];
    assert.equal((styled.match(/<w:tr>/g) ?? []).length, 4);
    assert.match(styled, /<w:i\/><w:color w:val="C00000"\/><\/w:rPr><w:t xml:space="preserve">apples</);
    const plain = (await filled([field({ id: "items", type: "table", rows: [{ cells: ["apples", "12"] }] })]))["word/document.xml"];
    assert.match(plain, /<w:tc><w:tcPr><w:tcW w:w="2400" w:type="dxa"\/><\/w:tcPr><w:p><w:r><w:t xml:space="preserve">apples</);
  });

  test("every problem at once, nothing filled: unknown tags and titles, wrong types, a bad image, a row too wide (422)", async () => {
    const error = await rejection([
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

    const wide = await rejection([field({ id: "items", type: "table", rows: [{ cells: ["a", "b", "c"] }] })]);
    assert.match(wide.details![0].issue, /row 0 has 3 cells, and the table .* has 2 columns/);
  });

  test("one image or drawn signature shown by many fields is decoded or drawn once, stored once and related once", async () => {
    const png = solidPng(30, 10, [0, 0, 255]).toString("base64");
    const signed = await filled(Array.from({ length: 50 }, () => field({ id: "signature", type: "signature", signerName: "Al", topLabel: "Signed by" })));
    assert.deepEqual(Object.keys(signed).filter((name) => name.startsWith("word/media/annotated-")), ["word/media/annotated-1.png"]);
    assert.equal((signed["word/_rels/document.xml.rels"].match(/rIdAnnotated/g) ?? []).length, 1);
    const two = await filled([field({ id: "signature", type: "image", value: png }), field({ id: "signature", type: "signature", signerName: "Al" }), field({ id: "signature", type: "image", value: png })]);
    assert.deepEqual(Object.keys(two).filter((name) => name.startsWith("word/media/annotated-")).sort(), ["word/media/annotated-1.png", "word/media/annotated-2.png"]);
    assert.match(two["word/document.xml"], /<a:blip r:embed="rIdAnnotated1"\/>/, "the last field's image, the first one stored");
  });

  test("the fields may fill at most ANNOTATE_LIMITS.maxControlFills controls in all, counted before anything is drawn or filled (422)", async () => {
    const titled = Array.from({ length: 20 }, (_, i) => paragraph(inlineText("", "x", i + 1, "date"))).join("");
    const docx = () => DocxPackage.open(templateDocx(titled));
    const fields = (n: number) => Array.from({ length: n }, () => field({ group: "date", type: "text", value: "25 November 2026" }));
    const over = Math.floor(ANNOTATE_LIMITS.maxControlFills / 20) + 1;
    await assert.rejects(
      fillTemplate(docx(), fields(over)),
      (error: ServiceError) => error.code === "UNPROCESSABLE_DOCUMENT" && error.details?.[0].field === "fields" && error.details[0].issue.includes(`would fill ${over * 20} content controls`),
    );
    await fillTemplate(docx(), fields(over - 1));
  });
});
