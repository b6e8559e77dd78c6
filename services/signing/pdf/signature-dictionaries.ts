/**
 * Finds the signature dictionaries of a PDF by scanning the raw bytes for
 * `/ByteRange [a b c d]` (which also finds signatures of earlier revisions
 * that a later incremental update replaced) together with pdf-lib's parsed
 * objects (which also sees dictionaries inside object streams). Metadata
 * (/M, /Name, /SubFilter) comes from pdf-lib's parse when it has the
 * dictionary, else from the raw bytes.
 */
import { PDFArray, PDFDict, PDFHexString, PDFName, PDFNumber, PDFStream, PDFString, type PDFDocument, type PDFObject } from "pdf-lib";
import { safe } from "../verification/safe.js";
import { decodeName, decodePdfText, hexStringBytes, literalStringBytes, pdfDateToIso } from "./pdf-strings.js";

/** What is known about one signature dictionary before its CMS is checked. */
export interface SignatureEntry {
  byteRange: number[];
  /** Offset of the /ByteRange key in the raw bytes (-1 when only pdf-lib saw it). */
  rawOffset: number;
  name: string;
  /** /ContactInfo: where our signatures record the signer's e-mail address. */
  contactInfo: string;
  subFilter: string;
  signedAt: string;
}

const BYTE_RANGE = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g;

/** Every signature dictionary, once per /ByteRange, in revision order. */
export function findSignatures(pdf: Buffer, document: PDFDocument): SignatureEntry[] {
  const text = pdf.toString("latin1");
  const parsed = parsedSignatureDictionaries(document);
  const byKey = new Map<string, SignatureEntry>();

  for (const match of text.matchAll(BYTE_RANGE)) {
    const byteRange = match.slice(1, 5).map(Number);
    const key = byteRange.join(" ");
    if (byKey.has(key)) continue;
    const dictionary = parsed.get(key);
    byKey.set(key, dictionary ? { ...entryFromDictionary(byteRange, dictionary), rawOffset: match.index } : rawEntry(text, byteRange, match.index));
  }
  for (const [key, dictionary] of parsed) {
    if (!byKey.has(key)) byKey.set(key, entryFromDictionary(key.split(" ").map(Number), dictionary));
  }
  // in revision order: the signature whose range ends last is the last one
  return [...byKey.values()].sort((x, y) => byteRangeEnd(x.byteRange) - byteRangeEnd(y.byteRange));
}

/** Where the bytes a /ByteRange covers end: the end of the revision it signs. */
export function byteRangeEnd(byteRange: number[]): number {
  return (byteRange[2] ?? 0) + (byteRange[3] ?? 0);
}

/** Dictionaries with a numeric 4-item /ByteRange among pdf-lib's objects, by "a b c d". */
function parsedSignatureDictionaries(document: PDFDocument): Map<string, PDFDict> {
  const found = new Map<string, PDFDict>();
  const byteRangeName = PDFName.of("ByteRange");
  const visit = (object: PDFObject, depth: number): void => {
    if (depth > 32) return;
    if (object instanceof PDFDict) {
      const range = object.get(byteRangeName);
      if (range instanceof PDFArray && range.size() === 4) {
        const numbers = range.asArray().map((item) => (item instanceof PDFNumber ? item.asNumber() : NaN));
        if (numbers.every((n) => Number.isInteger(n) && n >= 0)) found.set(numbers.join(" "), object);
      }
      for (const child of object.values()) visit(child, depth + 1);
    } else if (object instanceof PDFArray) {
      for (const child of object.asArray()) visit(child, depth + 1);
    }
  };
  for (const [, object] of document.context.enumerateIndirectObjects()) {
    visit(object instanceof PDFStream ? object.dict : object, 0);
  }
  return found;
}

function entryFromDictionary(byteRange: number[], dictionary: PDFDict): SignatureEntry {
  const subFilter = dictionary.get(PDFName.of("SubFilter"));
  const text = (key: string) => {
    const value = dictionary.get(PDFName.of(key));
    return value instanceof PDFString || value instanceof PDFHexString ? safe(() => value.decodeText(), "") : "";
  };
  return {
    byteRange,
    rawOffset: -1,
    subFilter: subFilter instanceof PDFName ? subFilter.decodeText() : "",
    name: text("Name"),
    contactInfo: text("ContactInfo"),
    signedAt: pdfDateToIso(text("M")),
  };
}

/** Metadata read from the raw bytes around the /ByteRange (the dictionary pdf-lib no longer sees, e.g. of an earlier revision). */
function rawEntry(text: string, byteRange: number[], offset: number): SignatureEntry {
  const startObj = Math.max(0, text.lastIndexOf("obj", offset));
  let endObj = text.indexOf("endobj", offset);
  if (endObj < 0) endObj = text.length;
  // skip the /Contents hex string, which can be long and holds nothing of interest
  const region = text.slice(startObj, endObj).replace(/\/Contents\s*<[0-9a-fA-F\s]*>/, "");
  const subFilter = /\/SubFilter\s*\/([^\s/<>[\]()]+)/.exec(region)?.[1] ?? "";
  return {
    byteRange,
    rawOffset: offset,
    subFilter: decodeName(subFilter),
    name: rawTextString(region, "Name"),
    contactInfo: rawTextString(region, "ContactInfo"),
    signedAt: pdfDateToIso(rawTextString(region, "M")),
  };
}

function rawTextString(region: string, key: string): string {
  const match = new RegExp(`/${key}\\s*([(<])`).exec(region);
  if (!match) return "";
  const start = match.index + match[0].length - 1;
  const bytes = match[1] === "<" ? hexStringBytes(region, start) : literalStringBytes(region, start);
  return bytes ? decodePdfText(bytes) : "";
}
