import assert from "node:assert/strict";
import { test } from "node:test";
import { fromDerExact } from "./asn1.js";
import { directoryString } from "./directory-string.js";

const decoded = (hex: string) => directoryString(fromDerExact(Buffer.from(hex, "hex"), "test value"));

test("a DirectoryString of each encoding reads as the same text", () => {
  // "Zoë 中" as UTF8String, BMPString (UTF-16BE) and UniversalString (UTF-32BE)
  const text = "Zoë 中";
  const utf8 = Buffer.from(text, "utf8");
  const utf16 = Buffer.from(text, "utf16le").swap16();
  const utf32 = Buffer.concat([...text].map((char) => Buffer.from([0, 0, char.codePointAt(0)! >> 8, char.codePointAt(0)! & 0xff])));
  assert.equal(decoded(`0c${utf8.length.toString(16).padStart(2, "0")}${utf8.toString("hex")}`), text);
  assert.equal(decoded(`1e${utf16.length.toString(16).padStart(2, "0")}${utf16.toString("hex")}`), text);
  assert.equal(decoded(`1c${utf32.length.toString(16).padStart(2, "0")}${utf32.toString("hex")}`), text);
  assert.equal(decoded("13024142"), "AB", "PrintableString");
});

test("a value that is not a character string has no text", () => {
  assert.equal(decoded("020101"), undefined, "INTEGER");
  assert.equal(decoded("0403414243"), undefined, "OCTET STRING");
});
