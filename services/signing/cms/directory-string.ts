import forge from "node-forge";
import type { Asn1 } from "./asn1.js";

const { Class, Type } = forge.asn1;

/** UTF8String, NumericString to VisibleString, GeneralString, UniversalString, CHARACTER STRING, BMPString. */
const STRING_TYPES = new Set([12, 18, 19, 20, 21, 22, 25, 26, 27, 28, 29, 30]);
const UNIVERSAL_STRING = 28;

/** A character string attribute value (a DirectoryString and its kin) as text; undefined for other values. */
export function directoryString(value: Asn1): string | undefined {
  if (value.tagClass !== Class.UNIVERSAL || typeof value.value !== "string" || !STRING_TYPES.has(value.type)) return undefined;
  // forge has already decoded a BMPString into UTF-16 code units
  if (value.type === Type.BMPSTRING) return value.value;
  const bytes = Buffer.from(value.value, "binary");
  if (value.type === Type.UTF8) return bytes.toString("utf8");
  if ((value.type as number) === UNIVERSAL_STRING) return universalString(bytes);
  return bytes.toString("latin1");
}

function universalString(bytes: Buffer): string {
  let result = "";
  for (let offset = 0; offset + 4 <= bytes.length; offset += 4) {
    const codePoint = bytes.readUInt32BE(offset);
    result += codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : "\ufffd";
  }
  return result;
}
