import assert from "node:assert/strict";
import { test } from "node:test";
import { AnnotationField } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { corpusFile } from "../../test/support/corpus.js";
import { contractTemplate } from "../../test/support/docx-templates.js";
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
