import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { strToU8, unzipSync, Zip, ZipDeflate } from "fflate";
import { computeDocumentId, PackageError, stampDocument, wordTimestamp, ZipError } from "./index.js";
import { corpusDocx, CUSTOM_XML_HEAD, customXml, expectedId, partText, rezip, setPart } from "./test/docx.js";
import { crc32 } from "./crc32.js";
import { entryContent, readZip } from "./zip.js";

const GUID = "0f8fad5b-d9cb-469f-a165-70867728950e";
const NOW = new Date("2026-03-04T05:06:07.890Z");
const STAMP = { documentGuid: GUID, now: NOW };
const CREATED = "2026-03-04T05:06:00Z";

const BOTH = "1-page.docx";
const CREATED_ONLY = "ComplexNumberedLists.docx";
const NEITHER = "korean_alignment_autospace.docx";
const CUSTOM_WITH_PROPERTIES = "WordWithAttachments.docx"; // custom.xml with pids 2..4
const CUSTOM_SELF_CLOSING = "office2pdf_technical_brief_ko.docx"; // <Properties .../>

/** Every entry's stored (compressed) bytes, by name. */
function storedEntries(docx: Uint8Array): Map<string, Uint8Array> {
  return new Map(readZip(docx).entries.map((entry) => [entry.name, entry.data]));
}

/** Entries of `before` that `after` must carry byte for byte (compressed data included). */
function assertCopied(before: Uint8Array, after: Uint8Array, except: readonly string[]): void {
  const old = storedEntries(before);
  const now = storedEntries(after);
  for (const [name, data] of old) {
    if (except.includes(name)) continue;
    assert.deepEqual(now.get(name), data, `${name} is copied unchanged`);
  }
}

/** Every entry's CRC matches its content, and fflate reads the archive. */
function assertSoundZip(docx: Uint8Array): void {
  for (const entry of readZip(docx).entries) assert.equal(crc32(entryContent(entry)), entry.crc, entry.name);
  assert.ok(Object.keys(unzipSync(docx)).length > 0);
}

const editBody = (docx: Uint8Array) =>
  rezip(docx, (parts) => {
    const xml = new TextDecoder().decode(parts["word/document.xml"]);
    parts["word/document.xml"] = strToU8(xml.replace("<w:body>", "<w:body><w:p><w:r><w:t>An edit.</w:t></w:r></w:p>"));
  });

describe("stampDocument", () => {
  test("a DOCX with neither value gets both, and its id then comes from them", () => {
    const docx = corpusDocx(NEITHER);
    const stamped = stampDocument(docx, STAMP);
    assert.deepEqual(computeDocumentId(stamped), {
      documentId: expectedId(`${GUID}|${CREATED}`),
      documentCreatedAt: CREATED,
      documentGuid: GUID,
    });
    assertSoundZip(stamped);
    assertCopied(docx, stamped, ["[Content_Types].xml", "_rels/.rels"]);

    const custom = partText(stamped, "docProps/custom.xml")!;
    assert.equal(
      custom,
      `${CUSTOM_XML_HEAD}<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="DocumentGuid"><vt:lpwstr>${GUID}</vt:lpwstr></property></Properties>`,
    );
    const core = partText(stamped, "docProps/core.xml")!;
    assert.match(core, /^<\?xml version="1.0" encoding="UTF-8" standalone="yes"\?>\n<cp:coreProperties xmlns:cp="http:\/\/schemas.openxmlformats.org\/package\/2006\/metadata\/core-properties"/);
    assert.match(core, /<dcterms:created xsi:type="dcterms:W3CDTF">2026-03-04T05:06:00Z<\/dcterms:created><\/cp:coreProperties>$/);

    const types = partText(stamped, "[Content_Types].xml")!;
    assert.match(types, /<Override PartName="\/docProps\/custom.xml" ContentType="application\/vnd.openxmlformats-officedocument.custom-properties\+xml"\/>/);
    assert.match(types, /<Override PartName="\/docProps\/core.xml" ContentType="application\/vnd.openxmlformats-package.core-properties\+xml"\/>/);
    const rels = partText(stamped, "_rels/.rels")!;
    assert.match(rels, /<Relationship Id="rId2" Type="http:\/\/schemas.openxmlformats.org\/officeDocument\/2006\/relationships\/custom-properties" Target="docProps\/custom.xml"\/>/);
    assert.match(rels, /<Relationship Id="rId3" Type="http:\/\/schemas.openxmlformats.org\/package\/2006\/relationships\/metadata\/core-properties" Target="docProps\/core.xml"\/>/);
    // The original text of the edited parts is kept around the insertion.
    assert.ok(types.startsWith(partText(docx, "[Content_Types].xml")!.replace("</Types>", "")));
  });

  test("after stamping, editing document.xml no longer changes the id (it did before)", () => {
    const docx = corpusDocx(NEITHER);
    assert.notEqual(computeDocumentId(editBody(docx)).documentId, computeDocumentId(docx).documentId);
    const stamped = stampDocument(docx);
    const edited = editBody(stamped);
    assert.notDeepEqual(edited, stamped);
    assert.equal(computeDocumentId(edited).documentId, computeDocumentId(stamped).documentId);
  });

  test("only the created timestamp: a DocumentGuid custom part is added, core.xml is left alone", () => {
    const docx = corpusDocx(CREATED_ONLY);
    const stamped = stampDocument(docx, STAMP);
    assert.deepEqual(computeDocumentId(stamped), {
      documentId: expectedId(`${GUID}|2016-11-03T17:41:00Z`),
      documentCreatedAt: "2016-11-03T17:41:00Z",
      documentGuid: GUID,
    });
    assertCopied(docx, stamped, ["[Content_Types].xml", "_rels/.rels"]);
    assertSoundZip(stamped);
  });

  test("only the GUID: dcterms:created is added, no custom part is written", () => {
    const docx = rezip(corpusDocx(BOTH), (parts) => {
      delete parts["docProps/core.xml"];
    });
    const stamped = stampDocument(docx, STAMP);
    assert.equal(partText(stamped, "docProps/custom.xml"), undefined);
    assert.equal(computeDocumentId(stamped).documentId, expectedId(`F53580D1-7D49-4B18-B407-0D6F312EE064|${CREATED}`));
  });

  test("a complete DOCX is returned as it is", () => {
    const docx = corpusDocx(BOTH);
    const stamped = stampDocument(docx);
    assert.equal(stamped, docx, "the very same array");
    assert.deepEqual(stampDocument(docx.slice().buffer), docx);
  });

  test("stamping twice changes nothing the second time", () => {
    const once = stampDocument(corpusDocx(NEITHER));
    assert.deepEqual(stampDocument(once), once);
  });

  test("an existing custom part gets the property appended with the next pid", () => {
    const docx = corpusDocx(CUSTOM_WITH_PROPERTIES);
    const before = partText(docx, "docProps/custom.xml")!;
    const after = partText(stampDocument(docx, STAMP), "docProps/custom.xml")!;
    assert.equal(
      after,
      before.replace(
        "</Properties>",
        `<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="5" name="DocumentGuid"><vt:lpwstr>${GUID}</vt:lpwstr></property></Properties>`,
      ),
    );
    const selfClosing = partText(stampDocument(corpusDocx(CUSTOM_SELF_CLOSING), STAMP), "docProps/custom.xml")!;
    assert.match(selfClosing, /docPropsVTypes"><property fmtid="\{D5CDD505-2E9C-101B-9397-08002B2CF9AE\}" pid="2" name="DocumentGuid"><vt:lpwstr>0f8fad5b-d9cb-469f-a165-70867728950e<\/vt:lpwstr><\/property><\/Properties>$/);
  });

  test("prefixed custom parts keep their prefixes; an undeclared vt prefix is declared", () => {
    const custom =
      '<op:Properties xmlns:op="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties">' +
      '<op:property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="7" name="A"/></op:Properties>';
    const docx = rezip(corpusDocx(CREATED_ONLY), (parts) => setPart(parts, "docProps/custom.xml", custom));
    const stamped = stampDocument(docx, STAMP);
    assert.equal(
      partText(stamped, "docProps/custom.xml"),
      custom.replace(
        "</op:Properties>",
        `<op:property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="8" name="DocumentGuid">` +
          `<vt:lpwstr xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">${GUID}</vt:lpwstr></op:property></op:Properties>`,
      ),
    );
    assert.equal(computeDocumentId(stamped).documentGuid, GUID);
  });

  test("an empty DocumentGuid property and an empty dcterms:created are filled in place", () => {
    const docx = rezip(corpusDocx(CREATED_ONLY), (parts) => {
      setPart(parts, "docProps/custom.xml", customXml({ First: "1", DocumentGuid: "" }));
      const core = new TextDecoder().decode(parts["docProps/core.xml"]);
      setPart(parts, "docProps/core.xml", core.replace(/<dcterms:created[^>]*>[^<]*<\/dcterms:created>/, '<dcterms:created xsi:type="dcterms:W3CDTF"> </dcterms:created>'));
    });
    assert.deepEqual(computeDocumentId(docx).documentGuid, null);
    const stamped = stampDocument(docx, STAMP);
    const custom = partText(stamped, "docProps/custom.xml")!;
    assert.equal((custom.match(/name="DocumentGuid"/g) ?? []).length, 1);
    assert.match(custom, new RegExp(`pid="3" name="DocumentGuid"><vt:lpwstr>${GUID}</vt:lpwstr></property></Properties>$`));
    const core = partText(stamped, "docProps/core.xml")!;
    assert.equal((core.match(/:created/g) ?? []).length, 2, "one element, opening and closing tag");
    assert.equal(computeDocumentId(stamped).documentId, expectedId(`${GUID}|${CREATED}`));
  });

  test("a default GUID is a random uuid v4 and the default time is now, to the minute", () => {
    const before = Date.now();
    const first = computeDocumentId(stampDocument(corpusDocx(NEITHER)));
    const second = computeDocumentId(stampDocument(corpusDocx(NEITHER)));
    assert.match(first.documentGuid!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(first.documentGuid, second.documentGuid);
    assert.notEqual(first.documentId, second.documentId);
    assert.match(first.documentCreatedAt!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    assert.ok(Date.parse(first.documentCreatedAt!) >= before - 60_000 && Date.parse(first.documentCreatedAt!) <= Date.now());
  });

  test("wordTimestamp truncates to the minute", () => {
    assert.equal(wordTimestamp(NOW), CREATED);
    assert.equal(wordTimestamp(new Date("1999-12-31T23:59:59.999Z")), "1999-12-31T23:59:00Z");
  });

  test("entries written with data descriptors are carried over intact", () => {
    const chunks: Uint8Array[] = [];
    const zip = new Zip((error, chunk) => {
      if (error) throw error;
      chunks.push(chunk);
    });
    const source = unzipSync(corpusDocx(NEITHER));
    for (const [name, content] of Object.entries(source)) {
      const file = new ZipDeflate(name);
      zip.add(file);
      file.push(content, true);
    }
    zip.end();
    const streamed = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    chunks.reduce((at, c) => (streamed.set(c, at), at + c.length), 0);
    assert.ok(readZip(streamed).entries.every((entry) => entry.flags & 0x0008), "fflate's streaming Zip uses data descriptors");

    const stamped = stampDocument(streamed, STAMP);
    assertSoundZip(stamped);
    assertCopied(streamed, stamped, ["[Content_Types].xml", "_rels/.rels"]);
    const parts = unzipSync(stamped);
    for (const [name, content] of Object.entries(source)) {
      if (name !== "[Content_Types].xml" && name !== "_rels/.rels") assert.deepEqual(parts[name], content, name);
    }
    assert.equal(computeDocumentId(stamped).documentGuid, GUID);
  });

  test("refuses what is not a DOCX package", () => {
    assert.throws(() => stampDocument(new TextEncoder().encode("plain text")), ZipError);
    assert.throws(() => stampDocument(corpusDocx("libreoffice/Encrypted_MSO2013_abc.docx")), ZipError);
    assert.throws(() => stampDocument(corpusDocx("libreoffice/tdf171025_pageAfter.docx")), PackageError);
  });
});
