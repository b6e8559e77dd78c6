/**
 * The document id the reference client computes (see DESIGN.md, Telemetry):
 * GUID from word/settings.xml w15:docId/@w15:val with {} stripped, else the
 * custom property DocumentGuid in docProps/custom.xml; created timestamp from
 * dcterms:created in docProps/core.xml. With both: "HASH-" + CRC-32 of the
 * UTF-8 string "<guid>|<created>"; otherwise "HASH-" + CRC-32 of the file.
 */
import { crc32Hex } from "./crc32.js";
import { PackageParts } from "./package-parts.js";
import { childElements, firstText, hasLocalName, type XmlElement } from "./xml.js";

export const SETTINGS_PART = "word/settings.xml";
export const CUSTOM_PART = "docProps/custom.xml";
export const CORE_PART = "docProps/core.xml";
export const DOCUMENT_GUID_PROPERTY = "DocumentGuid";

/**
 * What a content id looks like (SPEC 4.6): "HASH-" and the CRC-32 of the document's GUID and
 * created time, or of its bytes. The platform tells these apart from ids that say nothing of the
 * content (an application's own id, a random UUID per open) with this same pattern.
 */
export const CONTENT_ID_PATTERN = /^HASH-[0-9A-F]{8}$/;

export interface DocumentIdentity {
  /** "HASH-" followed by 8 uppercase hex digits. */
  readonly documentId: string;
  /** The dcterms:created text exactly as written in the file, or null when it has none. */
  readonly documentCreatedAt: string | null;
}

export interface DocumentMetadata {
  /** w15:docId without braces, else the DocumentGuid custom property; null when neither is set. */
  readonly documentGuid: string | null;
  readonly documentCreatedAt: string | null;
}

/** w15:docId/@w15:val among the root's children, braces removed; null when absent or empty. */
export function wordDocId(settings: XmlElement | undefined): string | null {
  const docId = settings && childElements(settings).find((element) => element.name === "w15:docId");
  return docId?.attributes.get("w15:val")?.replace(/[{}]/g, "") || null;
}

/** The first custom property element called `name`, when the part's root is a Properties element. */
export function findCustomProperty(custom: XmlElement | undefined, name: string): XmlElement | undefined {
  if (!custom || !hasLocalName(custom.name, "Properties")) return undefined;
  return childElements(custom).find((element) => hasLocalName(element.name, "property") && element.attributes.get("name") === name);
}

/** A custom property's value: the text of its first child (the vt:lpwstr), or null. */
export function customPropertyValue(property: XmlElement | undefined): string | null {
  const value = property?.children[0];
  return value?.kind === "element" ? firstText(value) : null;
}

/** The first dcterms:created (any prefix) element, when the part's root is coreProperties. */
export function findCreated(core: XmlElement | undefined): XmlElement | undefined {
  if (!core || !hasLocalName(core.name, "coreProperties")) return undefined;
  return childElements(core).find((element) => hasLocalName(element.name, "created"));
}

/** Reads the GUID and the created timestamp; missing or unreadable parts count as absent. */
export function readDocumentMetadata(parts: PackageParts): DocumentMetadata {
  return {
    documentGuid:
      wordDocId(parts.root(SETTINGS_PART)) ?? customPropertyValue(findCustomProperty(parts.root(CUSTOM_PART), DOCUMENT_GUID_PROPERTY)),
    documentCreatedAt: firstText(findCreated(parts.root(CORE_PART))),
  };
}

function openParts(bytes: Uint8Array): PackageParts | undefined {
  try {
    return new PackageParts(bytes);
  } catch {
    return undefined;
  }
}

const NO_METADATA: DocumentMetadata = { documentGuid: null, documentCreatedAt: null };

/** A byte view of a Uint8Array (or Node Buffer) or an ArrayBuffer, without copying. */
export function toBytes(docx: Uint8Array | ArrayBuffer): Uint8Array {
  return ArrayBuffer.isView(docx) ? new Uint8Array(docx.buffer, docx.byteOffset, docx.byteLength) : new Uint8Array(docx);
}

/**
 * The document id of a DOCX, as the reference client computes it. Never
 * throws for bad content: a file that is not a readable DOCX (encrypted,
 * damaged, not a ZIP) gets the hash of its bytes.
 */
export function computeDocumentId(docx: Uint8Array | ArrayBuffer): DocumentIdentity & DocumentMetadata {
  const bytes = toBytes(docx);
  const parts = openParts(bytes);
  const metadata = parts ? readDocumentMetadata(parts) : NO_METADATA;
  const { documentGuid, documentCreatedAt } = metadata;
  const hashed = documentGuid && documentCreatedAt ? new TextEncoder().encode(`${documentGuid}|${documentCreatedAt}`) : bytes;
  return { documentId: `HASH-${crc32Hex(hashed)}`, documentCreatedAt, documentGuid };
}
