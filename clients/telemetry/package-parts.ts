/** A DOCX as a list of ZIP entries whose XML parts can be read, replaced or added. */
import { decodeXml, encodeXml, parseXml, type XmlElement, type XmlEncoding } from "./xml.js";
import { entryContent, newEntry, readZip, withContent, writeZip, type ZipEntry } from "./zip.js";

export interface XmlPart {
  readonly name: string;
  readonly source: string;
  readonly encoding: XmlEncoding;
}

const UTF8: XmlEncoding = { charset: "utf-8", bom: false };

export class PackageParts {
  readonly #entries: ZipEntry[];
  readonly #comment: Uint8Array;

  /** Throws ZipError when `bytes` is not a readable ZIP archive. */
  constructor(bytes: Uint8Array) {
    const archive = readZip(bytes);
    this.#entries = [...archive.entries];
    this.#comment = archive.comment;
  }

  #index(name: string, anyCase: boolean): number {
    const exact = this.#entries.findIndex((entry) => entry.name === name);
    if (exact !== -1 || !anyCase) return exact;
    const lower = name.toLowerCase();
    return this.#entries.findIndex((entry) => entry.name.toLowerCase() === lower);
  }

  /**
   * The XML text of a part, or undefined when it is absent or unreadable.
   * Lookup is by exact name, as the reference client does; `anyCase` also
   * accepts a differently cased name (OPC part names are case-insensitive).
   */
  read(name: string, anyCase = false): XmlPart | undefined {
    const index = this.#index(name, anyCase);
    if (index === -1) return undefined;
    try {
      return { name, ...decodeXml(entryContent(this.#entries[index]!)) };
    } catch {
      return undefined;
    }
  }

  /** The root element of a part, or undefined when it is absent, unreadable or malformed. */
  root(name: string): XmlElement | undefined {
    const part = this.read(name);
    if (!part) return undefined;
    try {
      return parseXml(part.source);
    } catch {
      return undefined;
    }
  }

  /** Replaces the part (matched in any case, renamed to `name`) in place, or appends it. */
  write(name: string, source: string, modified: Date, encoding: XmlEncoding = UTF8): void {
    const content = encodeXml(source, encoding);
    const index = this.#index(name, true);
    if (index === -1) {
      this.#entries.push(newEntry(name, content, modified));
    } else {
      const old = this.#entries[index]!;
      const renamed = old.name === name ? old : { ...old, name, nameBytes: new TextEncoder().encode(name) };
      this.#entries[index] = withContent(renamed, content, modified);
    }
  }

  toBytes(): Uint8Array {
    return writeZip({ entries: this.#entries, comment: this.#comment });
  }
}
