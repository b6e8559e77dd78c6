import { DOMParser, XMLSerializer, type Document } from "@xmldom/xmldom";
import { strFromU8, strToU8, unzipSync, zipSync, type Unzipped } from "fflate";
import { checkXmlShape } from "../core/xml-shape.js";

/** Parts of a DOCX that hold content controls a template fills: the body, headers and footers. */
const CONTENT_PART = /^word\/(document|header\d*|footer\d*)\.xml$/;

/**
 * A DOCX (a ZIP of XML parts) open for editing: the content parts parsed,
 * every other part kept byte for byte, written back in the same order.
 */
export class DocxPackage {
  /** The parsed content parts, by part name. */
  readonly contentParts = new Map<string, Document>();
  private readonly parsed = new Map<string, Document>();
  /** Elements of the parts parsed so far: the whole package's are bounded, not only each part's. */
  private elements = 0;

  private constructor(private readonly parts: Unzipped) {
    for (const name of Object.keys(parts)) if (CONTENT_PART.test(name)) this.contentParts.set(name, this.xml(name)!);
  }

  /** Opens checked DOCX bytes (conversion's document check ran first: a ZIP, no bomb). */
  static open(bytes: Buffer): DocxPackage {
    return new DocxPackage(unzipSync(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
  }

  /** A part parsed as XML (edits to it are written back), undefined when the package has no such part. */
  xml(name: string): Document | undefined {
    const cached = this.parsed.get(name);
    if (cached) return cached;
    const bytes = this.parts[name];
    if (!bytes) return undefined;
    const text = strFromU8(bytes);
    this.elements = checkXmlShape(text, name, this.elements);
    // xmldom prints what it recovers from to the console; a fatal error still throws (the caller's 422)
    const document = new DOMParser({ onError: () => {} }).parseFromString(text, "text/xml");
    this.parsed.set(name, document);
    return document;
  }

  /** A new part, or one created from XML text. */
  put(name: string, content: Uint8Array<ArrayBuffer> | string): void {
    this.parsed.delete(name);
    this.parts[name] = typeof content === "string" ? strToU8(content) : content;
  }

  has(name: string): boolean {
    return name in this.parts;
  }

  toBuffer(): Buffer {
    const serializer = new XMLSerializer();
    for (const [name, document] of this.parsed) this.parts[name] = strToU8(serializer.serializeToString(document));
    return Buffer.from(zipSync(this.parts, { level: 6 }));
  }
}
