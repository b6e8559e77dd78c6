import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { GotenbergConverter } from "../../services/conversion/gotenberg-converter.js";
import { formatByName } from "../../services/conversion/source-format.js";
import { ServiceError } from "../../services/core/errors.js";
import { slowDocx } from "../support/docx-fixtures.js";
import { startGotenberg, type Gotenberg } from "../support/gotenberg.js";
import { freePort } from "../support/ports.js";
import { corpusFile } from "../support/corpus.js";
import { describePdfAResult, validatePdfA } from "../support/verapdf.js";

const docx = formatByName("docx")!;
const isPdf = (bytes: Buffer) => bytes.subarray(0, 5).toString() === "%PDF-";

// The production backend against a real Gotenberg 8, called through gotenberg-js-client.
describe("Gotenberg converter", () => {
  let gotenberg: Gotenberg;

  before(async () => {
    gotenberg = await startGotenberg();
  });

  after(async () => {
    await gotenberg?.stop();
  });

  test("converts a DOCX through Gotenberg 8's LibreOffice route", async () => {
    const converter = new GotenbergConverter({ url: gotenberg.url, timeoutMs: 30_000 });
    await converter.health();
    assert.ok(isPdf(await converter.convert(corpusFile("table.docx"), docx)));
  });

  test("pdfa=2b and pdfa=3b through Gotenberg pass veraPDF; DOCX output is refused with a 400 naming the backend", async () => {
    const converter = new GotenbergConverter({ url: gotenberg.url, timeoutMs: 60_000 });
    for (const pdfa of ["2b", "3b"] as const) {
      const verdict = await validatePdfA(await converter.convert(corpusFile("word_tables.docx"), docx, { to: "pdf", pdfa, pdfua: false }), pdfa);
      assert.ok(verdict.compliant, describePdfAResult(verdict));
    }
    await assert.rejects(converter.convert(corpusFile("table.docx"), formatByName("odt")!, { to: "docx" }), (error: ServiceError) => {
      assert.equal(error.code, "VALIDATION_ERROR");
      assert.match(error.message, /Gotenberg converts to PDF only/);
      return true;
    });
  });

  test("a document Gotenberg rejects is our 422", async () => {
    const converter = new GotenbergConverter({ url: gotenberg.url, timeoutMs: 30_000 });
    await assert.rejects(converter.convert(Buffer.from("PK\x03\x04 not really a zip"), docx), (error: ServiceError) => {
      assert.equal(error.code, "UNPROCESSABLE_DOCUMENT");
      assert.equal(error.httpStatus, 422);
      return true;
    });
  });

  test("a conversion over our timeout is a 504", async () => {
    const converter = new GotenbergConverter({ url: gotenberg.url, timeoutMs: 200 });
    await assert.rejects(converter.convert(slowDocx(), docx), (error: ServiceError) => error.code === "TIMEOUT" && error.httpStatus === 504);
  });

  test("Gotenberg down is a 503 with Retry-After, and health says so", async () => {
    const converter = new GotenbergConverter({ url: `http://127.0.0.1:${await freePort()}`, timeoutMs: 5000 });
    await assert.rejects(converter.health());
    await assert.rejects(converter.convert(corpusFile("table.docx"), docx), (error: ServiceError) => {
      assert.equal(error.code, "UNAVAILABLE");
      assert.ok((error.retryAfterSeconds ?? 0) > 0);
      return true;
    });
  });
});
