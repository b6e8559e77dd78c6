import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { unzipSync } from "fflate";
import { CORPUS_DIR } from "../../test/support/corpus.js";
import { computeDocumentId } from "./index.js";
import { corpusDocx, customXml, expectedId, partText, rezip, setPart } from "./test/docx.js";

// Corpus files by what they carry (checked in the tests below).
const BOTH = "1-page.docx"; // w15:docId + dcterms:created
const CREATED_ONLY = "ComplexNumberedLists.docx"; // dcterms:created, no GUID
const NEITHER = "korean_alignment_autospace.docx"; // no docProps/core.xml, no GUID
const ENCRYPTED = "libreoffice/Encrypted_MSO2013_abc.docx"; // an OLE container, not a ZIP

const withoutCore = (docx: Uint8Array) =>
  rezip(docx, (parts) => {
    delete parts["docProps/core.xml"];
  });

describe("computeDocumentId", () => {
  test("GUID and created timestamp: HASH- + CRC-32 of '<guid>|<created>', braces stripped", () => {
    const docx = corpusDocx(BOTH);
    assert.match(partText(docx, "word/settings.xml")!, /<w15:docId w15:val="\{F53580D1-7D49-4B18-B407-0D6F312EE064\}"\/>/);
    const id = computeDocumentId(docx);
    assert.deepEqual(id, {
      documentId: expectedId("F53580D1-7D49-4B18-B407-0D6F312EE064|2025-02-28T03:58:00Z"),
      documentCreatedAt: "2025-02-28T03:58:00Z",
      documentGuid: "F53580D1-7D49-4B18-B407-0D6F312EE064",
    });
    assert.equal(id.documentId, "HASH-00C79232");
  });

  test("only the created timestamp: the CRC-32 of the file's bytes", () => {
    const docx = corpusDocx(CREATED_ONLY);
    const id = computeDocumentId(docx);
    assert.equal(id.documentGuid, null);
    assert.equal(id.documentCreatedAt, "2016-11-03T17:41:00Z");
    assert.equal(id.documentId, expectedId(docx));
    assert.equal(id.documentId, "HASH-6E63B9D6");
  });

  test("only the GUID: the CRC-32 of the file's bytes", () => {
    const docx = withoutCore(corpusDocx(BOTH));
    const id = computeDocumentId(docx);
    assert.equal(id.documentGuid, "F53580D1-7D49-4B18-B407-0D6F312EE064");
    assert.equal(id.documentCreatedAt, null);
    assert.equal(id.documentId, expectedId(docx));
  });

  test("neither: the CRC-32 of the file's bytes", () => {
    const docx = corpusDocx(NEITHER);
    assert.equal(partText(docx, "docProps/core.xml"), undefined);
    assert.deepEqual(computeDocumentId(docx), { documentId: expectedId(docx), documentCreatedAt: null, documentGuid: null });
  });

  test("the DocumentGuid custom property stands in for a missing w15:docId", () => {
    const docx = rezip(corpusDocx(CREATED_ONLY), (parts) => setPart(parts, "docProps/custom.xml", customXml({ Other: "x", DocumentGuid: "1b4e28ba-2fa1-41d2-883f-0016d3cca427" })));
    const id = computeDocumentId(docx);
    assert.equal(id.documentGuid, "1b4e28ba-2fa1-41d2-883f-0016d3cca427");
    assert.equal(id.documentId, expectedId("1b4e28ba-2fa1-41d2-883f-0016d3cca427|2016-11-03T17:41:00Z"));
  });

  test("a namespace-prefixed custom part (op:Properties / op:property) is read too", () => {
    const custom =
      '<?xml version="1.0" encoding="UTF-8"?><op:Properties xmlns:op="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" ' +
      'xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">' +
      '<op:property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="DocumentGuid">\n  <vt:lpwstr>guid-&amp;-1</vt:lpwstr>\n</op:property></op:Properties>';
    const docx = rezip(corpusDocx(CREATED_ONLY), (parts) => setPart(parts, "docProps/custom.xml", custom));
    assert.equal(computeDocumentId(docx).documentGuid, "guid-&-1");
  });

  test("w15:docId wins over DocumentGuid; an empty w15:docId ('{}') falls back to it", () => {
    const withCustom = (docx: Uint8Array) =>
      rezip(docx, (parts) => setPart(parts, "docProps/custom.xml", customXml({ DocumentGuid: "from-custom" })));
    assert.equal(computeDocumentId(withCustom(corpusDocx(BOTH))).documentGuid, "F53580D1-7D49-4B18-B407-0D6F312EE064");
    const emptyDocId = rezip(withCustom(corpusDocx(BOTH)), (parts) => {
      const settings = partText(corpusDocx(BOTH), "word/settings.xml")!.replace(/w15:val="\{[^}]*\}"/, 'w15:val="{}"');
      setPart(parts, "word/settings.xml", settings);
    });
    assert.equal(computeDocumentId(emptyDocId).documentGuid, "from-custom");
  });

  test("the created timestamp is used verbatim, not normalised", () => {
    const docx = rezip(corpusDocx("libreoffice/math-malformed_xml.docx"), (parts) =>
      setPart(parts, "docProps/custom.xml", customXml({ DocumentGuid: "g" })),
    );
    const id = computeDocumentId(docx);
    assert.equal(id.documentCreatedAt, "2011-11-24T13:24:12.00Z");
    assert.equal(id.documentId, expectedId("g|2011-11-24T13:24:12.00Z"));
  });

  test("the same file opened twice gets the same id; ArrayBuffer, Buffer and offset views agree", () => {
    for (const name of [BOTH, CREATED_ONLY, NEITHER]) {
      const first = computeDocumentId(corpusDocx(name)).documentId;
      const again = corpusDocx(name);
      assert.equal(computeDocumentId(again).documentId, first, name);
      assert.equal(computeDocumentId(again.slice().buffer).documentId, first, `${name} as ArrayBuffer`);
      const padded = new Uint8Array(again.length + 10);
      padded.set(again, 7);
      assert.equal(computeDocumentId(padded.subarray(7, 7 + again.length)).documentId, first, `${name} as an offset view`);
    }
  });

  test("never throws: encrypted, truncated or non-ZIP input gets the byte hash", () => {
    for (const bytes of [corpusDocx(ENCRYPTED), corpusDocx("poi/truncated62886.docx"), new Uint8Array(0), new TextEncoder().encode("not a zip")]) {
      assert.deepEqual(computeDocumentId(bytes), { documentId: expectedId(bytes), documentCreatedAt: null, documentGuid: null });
    }
  });

  test("agrees on every corpus file with an independent reader (fflate + regular expressions)", () => {
    const files = readdirSync(CORPUS_DIR, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".docx"));
    assert.ok(files.length >= 100, `${files.length} corpus files`);
    let guidRule = 0;
    for (const name of files) {
      const docx = corpusDocx(name);
      let guid: string | null = null;
      let created: string | null = null;
      try {
        const parts = unzipSync(docx);
        const text = (part: string) => (parts[part] ? new TextDecoder().decode(parts[part]) : "");
        guid = /<w15:docId w15:val="([^"]*)"/.exec(text("word/settings.xml"))?.[1]?.replace(/[{}]/g, "") || null;
        guid ??= /name="DocumentGuid"[^>]*><vt:lpwstr>([^<]+)</.exec(text("docProps/custom.xml"))?.[1] ?? null;
        const createdText = /<dcterms:created[^>]*>([^<]+)<\/dcterms:created>/.exec(text("docProps/core.xml"))?.[1];
        created = createdText?.trim() ? createdText : null;
      } catch {
        // not a readable ZIP: no metadata
      }
      const expected = guid && created ? expectedId(`${guid}|${created}`) : expectedId(docx);
      if (guid && created) guidRule++;
      assert.equal(computeDocumentId(docx).documentId, expected, name);
    }
    assert.ok(guidRule >= 20, `${guidRule} files use the GUID rule`);
  });
});
