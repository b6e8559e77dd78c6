/** Test helpers (Node only): corpus files, rewritten DOCX variants and an independent CRC-32. */
import CRC32 from "crc-32";
import { strFromU8, strToU8, unzipSync, zipSync, type Unzipped } from "fflate";
import { corpusFile } from "../../../test/support/corpus.js";

/** A corpus DOCX as a fresh Uint8Array. */
export function corpusDocx(name: string): Uint8Array {
  return new Uint8Array(corpusFile(name));
}

/** The DOCX unzipped, edited by `edit`, and zipped again (by fflate, so every part is recompressed). */
export function rezip(docx: Uint8Array, edit: (parts: Unzipped) => void): Uint8Array {
  const parts = unzipSync(docx);
  edit(parts);
  return zipSync(parts);
}

export function partText(docx: Uint8Array, name: string): string | undefined {
  const part = unzipSync(docx, { filter: (file) => file.name === name })[name];
  return part && strFromU8(part);
}

export function setPart(parts: Unzipped, name: string, xml: string): void {
  parts[name] = strToU8(xml);
}

/** "HASH-" + CRC-32 from the crc-32 package, independent of the implementation under test. */
export function expectedId(input: string | Uint8Array): string {
  const crc = typeof input === "string" ? CRC32.str(input) : CRC32.buf(input);
  return `HASH-${(crc >>> 0).toString(16).toUpperCase().padStart(8, "0")}`;
}

export const CUSTOM_XML_HEAD =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" ' +
  'xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">';

/** A docProps/custom.xml holding these string properties, pids from 2. */
export function customXml(properties: Record<string, string>): string {
  const body = Object.entries(properties)
    .map(
      ([name, value], i) =>
        `<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="${i + 2}" name="${name}"><vt:lpwstr>${value}</vt:lpwstr></property>`,
    )
    .join("");
  return `${CUSTOM_XML_HEAD}${body}</Properties>`;
}
