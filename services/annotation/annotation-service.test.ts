import assert from "node:assert/strict";
import { test } from "node:test";
import { AnnotationField } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { corpusFile } from "../../test/support/corpus.js";
import { blockText, contractTemplate, templateDocx } from "../../test/support/docx-templates.js";
import { ServiceError } from "../core/errors.js";
import { AnnotationService } from "./annotation-service.js";

const service = new AnnotationService({
  conversion: { convert: () => Promise.reject(new Error("not called")) },
  limits: { maxDocumentBytes: 200_000, maxUncompressedBytes: 10_000_000, maxZipEntries: 1000 },
  fetch: { timeoutMs: 1000, maxRedirects: 0, allowHosts: [] },
});
const text = AnnotationField.fromPartial({ id: "customer", type: "text", value: "Ada" });

async function codeOf(content: Buffer, fields = [text]): Promise<string> {
  try {
    await service.annotate({ document: { content }, fields, toPdf: false });
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    return `${error.code}: ${error.message}`;
  }
  return "filled";
}

test("templates that are not fillable DOCX get the document's error, never a 500", async () => {
  assert.match(await codeOf(corpusFile("libreoffice/math-malformed_xml.docx")), /^UNPROCESSABLE_DOCUMENT: The template's XML cannot be read: Opening and ending tag mismatch/);
  assert.match(await codeOf(Buffer.from("%PDF-1.7")), /^UNSUPPORTED_MEDIA_TYPE/);
  assert.match(await codeOf(Buffer.alloc(300_000, 1)), /^PAYLOAD_TOO_LARGE/);
  assert.match(await codeOf(contractTemplate(), []), /^VALIDATION_ERROR/);
  assert.equal(await codeOf(contractTemplate()), "filled");
});

test("a template whose XML is far larger or deeper than a document's is refused before it is parsed, in a moment and a few MB", async () => {
  const control = blockText("customer", "name", 1);
  const wide = templateDocx(control + "<w:p/>".repeat(1_500_000));
  const deep = templateDocx(control + "<w:p>".repeat(400_000) + "</w:p>".repeat(400_000));
  assert.ok(wide.length < 100_000 && deep.length < 100_000, `${wide.length} and ${deep.length} bytes`);
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  assert.equal(await codeOf(wide), "UNPROCESSABLE_DOCUMENT: The document has more than 100000 XML elements (word/document.xml); at most 100000 are accepted.");
  assert.equal(await codeOf(deep), "UNPROCESSABLE_DOCUMENT: The document's word/document.xml nests XML elements more than 256 levels deep; at most 256 levels are accepted.");
  assert.ok(performance.now() - started < 3000, `${performance.now() - started} ms`);
  assert.ok(process.memoryUsage().heapUsed - heapBefore < 200 * 2 ** 20);
});
