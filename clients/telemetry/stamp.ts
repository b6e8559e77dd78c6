/**
 * Writes the metadata the document id needs into a DOCX that lacks it, as the
 * reference client does on export: a missing GUID becomes a uuid v4 custom
 * property DocumentGuid, a missing dcterms:created gets the current time.
 * Once both are present the id is derived from them, so it survives edits.
 */
import {
  CORE_PART,
  CUSTOM_PART,
  DOCUMENT_GUID_PROPERTY,
  findCreated,
  findCustomProperty,
  readDocumentMetadata,
  toBytes,
} from "./document-id.js";
import { PackageParts } from "./package-parts.js";
import { CONTENT_TYPES_PART, PackageError, registerPackagePart, XML_DECLARATION, type PackagePartLink } from "./package-links.js";
import { randomUuid } from "./uuid.js";
import {
  appendChild,
  childElements,
  escapeXml,
  hasLocalName,
  parseXml,
  prefixFor,
  prefixOf,
  replaceElement,
  type XmlElement,
  type XmlEncoding,
} from "./xml.js";

/** The format identifier of user-defined custom properties (FMTID_UserDefinedProperties). */
export const CUSTOM_PROPERTIES_FMTID = "{D5CDD505-2E9C-101B-9397-08002B2CF9AE}";

const CUSTOM_NS = "http://schemas.openxmlformats.org/officeDocument/2006/custom-properties";
const VT_NS = "http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes";
const CORE_NS = "http://schemas.openxmlformats.org/package/2006/metadata/core-properties";
const DC_NS = "http://purl.org/dc/elements/1.1/";
const DCTERMS_NS = "http://purl.org/dc/terms/";
const DCMITYPE_NS = "http://purl.org/dc/dcmitype/";
const XSI_NS = "http://www.w3.org/2001/XMLSchema-instance";

const CUSTOM_LINK: PackagePartLink = {
  path: CUSTOM_PART,
  contentType: "application/vnd.openxmlformats-officedocument.custom-properties+xml",
  relationshipType: "http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties",
};

const CORE_LINK: PackagePartLink = {
  path: CORE_PART,
  contentType: "application/vnd.openxmlformats-package.core-properties+xml",
  relationshipType: "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties",
};

export interface StampOptions {
  /** The GUID written when the document has none; default a random uuid v4. */
  readonly documentGuid?: string;
  /** The time written as dcterms:created when missing, truncated to the minute as Word does; default now. */
  readonly now?: Date;
  /** The dcterms:created text written when missing, instead of one from `now`. */
  readonly documentCreatedAt?: string;
}

/** "YYYY-MM-DDTHH:MM:00Z", the minute-precision form Word and the reference client write. */
export function wordTimestamp(date: Date): string {
  const minute = new Date(date.getTime());
  minute.setUTCSeconds(0, 0);
  return `${minute.toISOString().slice(0, 19)}Z`;
}

interface EditablePart {
  readonly source: string;
  readonly root: XmlElement;
  readonly encoding: XmlEncoding | undefined;
}

/** The part to edit: the existing one when its root is usable, else `empty` (a fresh part replaces a broken one). */
function editablePart(parts: PackageParts, path: string, rootName: string, empty: string): EditablePart {
  const part = parts.read(path, true);
  if (part) {
    try {
      const root = parseXml(part.source);
      if (hasLocalName(root.name, rootName)) return { source: part.source, root, encoding: part.encoding };
    } catch {
      // unreadable: replaced below
    }
  }
  return { source: empty, root: parseXml(empty), encoding: undefined };
}

/** The name to use for an element in the namespace `uri`, and the declaration it needs when `root` binds no prefix to it. */
function boundName(root: XmlElement, uri: string, fallbackPrefix: string, local: string): { name: string; declaration: string } {
  const prefix = prefixFor(root, uri);
  if (prefix) return { name: `${prefix}:${local}`, declaration: "" };
  return { name: `${fallbackPrefix}:${local}`, declaration: ` xmlns:${fallbackPrefix}="${uri}"` };
}

function nextPid(properties: XmlElement): number {
  const pids = childElements(properties)
    .map((element) => parseInt(element.attributes.get("pid") ?? "", 10))
    .filter(Number.isInteger);
  return pids.length > 0 ? Math.max(...pids) + 1 : 2;
}

function guidPropertyMarkup(properties: XmlElement, pid: string, guid: string): string {
  const prefix = prefixOf(properties.name);
  const property = prefix ? `${prefix}:property` : "property";
  const value = boundName(properties, VT_NS, "vt", "lpwstr");
  return (
    `<${property} fmtid="${CUSTOM_PROPERTIES_FMTID}" pid="${escapeXml(pid)}" name="${DOCUMENT_GUID_PROPERTY}">` +
    `<${value.name}${value.declaration}>${escapeXml(guid)}</${value.name}></${property}>`
  );
}

function createdMarkup(core: XmlElement, timestamp: string): string {
  const created = boundName(core, DCTERMS_NS, "dcterms", "created");
  const type = boundName(core, XSI_NS, "xsi", "type");
  const dcterms = prefixOf(created.name);
  return `<${created.name}${created.declaration}${type.declaration} ${type.name}="${dcterms}:W3CDTF">${escapeXml(timestamp)}</${created.name}>`;
}

/** Writes `markup` into the part's root (in place of `existing` when given) and registers the part in the package. */
function writeIntoPart(
  parts: PackageParts,
  link: PackagePartLink,
  part: EditablePart,
  existing: XmlElement | undefined,
  markup: string,
  modified: Date,
): void {
  const source = existing ? replaceElement(part.source, existing, markup) : appendChild(part.source, part.root, markup);
  parts.write(link.path, source, modified, part.encoding);
  registerPackagePart(parts, link, modified);
}

const EMPTY_CUSTOM = `${XML_DECLARATION}<Properties xmlns="${CUSTOM_NS}" xmlns:vt="${VT_NS}"></Properties>`;

const EMPTY_CORE =
  `${XML_DECLARATION}<cp:coreProperties xmlns:cp="${CORE_NS}" xmlns:dc="${DC_NS}" xmlns:dcterms="${DCTERMS_NS}" ` +
  `xmlns:dcmitype="${DCMITYPE_NS}" xmlns:xsi="${XSI_NS}"></cp:coreProperties>`;

function addDocumentGuid(parts: PackageParts, guid: string, modified: Date): void {
  const part = editablePart(parts, CUSTOM_PART, "Properties", EMPTY_CUSTOM);
  // Present but empty: the reference reads it as missing, so it is replaced in place.
  const existing = findCustomProperty(part.root, DOCUMENT_GUID_PROPERTY);
  const pid = existing?.attributes.get("pid") ?? String(nextPid(part.root));
  writeIntoPart(parts, CUSTOM_LINK, part, existing, guidPropertyMarkup(part.root, pid, guid), modified);
}

function addCreated(parts: PackageParts, timestamp: string, modified: Date): void {
  const part = editablePart(parts, CORE_PART, "coreProperties", EMPTY_CORE);
  writeIntoPart(parts, CORE_LINK, part, findCreated(part.root), createdMarkup(part.root, timestamp), modified);
}

/**
 * A copy of the DOCX with a DocumentGuid custom property and/or a
 * dcterms:created timestamp added when missing; the input itself when both
 * are present (a Uint8Array view of it when it is an ArrayBuffer). Parts it
 * does not edit are copied byte for byte, compressed data included.
 *
 * @throws ZipError when the input is not a ZIP archive, PackageError when it
 * is not an OPC package ([Content_Types].xml missing or malformed).
 */
export function stampDocument(docx: Uint8Array | ArrayBuffer, options: StampOptions = {}): Uint8Array {
  const bytes = toBytes(docx);
  const parts = new PackageParts(bytes);
  const { documentGuid, documentCreatedAt } = readDocumentMetadata(parts);
  if (documentGuid && documentCreatedAt) return docx instanceof Uint8Array ? docx : bytes;
  if (!parts.read(CONTENT_TYPES_PART, true)) throw new PackageError(`not a DOCX package: ${CONTENT_TYPES_PART} is missing`);
  const modified = options.now ?? new Date();
  if (!documentGuid) addDocumentGuid(parts, options.documentGuid || randomUuid(), modified);
  if (!documentCreatedAt) addCreated(parts, options.documentCreatedAt || wordTimestamp(modified), modified);
  return parts.toBytes();
}
