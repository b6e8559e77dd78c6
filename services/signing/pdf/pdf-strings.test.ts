import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeName, decodePdfText, hexStringBytes, literalStringBytes, pdfDateToIso } from "./pdf-strings.js";

describe("PDF strings read from raw bytes", () => {
  test("literal strings: nested parentheses, escapes, octal, line continuations", () => {
    const text = String.raw`/Name (a (b) \(c\) \101\60x \n\\ d\
e) tail`;
    assert.equal(literalStringBytes(text, text.indexOf("(")).toString("latin1"), "a (b) (c) A0x \n\\ de");
  });

  test("hex strings: whitespace skipped, an odd last digit followed by 0, unterminated: none", () => {
    assert.deepEqual(hexStringBytes("<48 65 6C6C 6F7>", 0), Buffer.from("Hello\x70", "latin1"));
    assert.equal(hexStringBytes("<4865", 0), undefined);
  });

  test("text strings: UTF-16BE and UTF-8 by their byte order marks, else PDFDocEncoding", () => {
    assert.equal(decodePdfText(Buffer.from([0xfe, 0xff, 0x00, 0x5a, 0x00, 0xeb])), "Zë");
    assert.equal(decodePdfText(Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from("Zoë")])), "Zoë");
    assert.equal(decodePdfText(Buffer.from([0x5a, 0xeb])), "Zë");
  });

  test("names: #xx escapes", () => {
    assert.equal(decodeName("ETSI.CAdES#2Edetached"), "ETSI.CAdES.detached");
  });

  test("dates: offsets applied, missing parts defaulted, garbage empty", () => {
    assert.equal(pdfDateToIso("D:20250304050607+02'00'"), "2025-03-04T03:06:07.000Z");
    assert.equal(pdfDateToIso("D:20250304050607Z"), "2025-03-04T05:06:07.000Z");
    assert.equal(pdfDateToIso("D:2025"), "2025-01-01T00:00:00.000Z");
    assert.equal(pdfDateToIso("yesterday"), "");
  });
});
