/**
 * Registers a package-level part: its content type Override in
 * [Content_Types].xml and its relationship in _rels/.rels, each only when
 * missing, editing the existing XML text in place.
 */
import type { PackageParts } from "./package-parts.js";
import { appendChild, childElements, escapeXml, hasLocalName, parseXml, prefixOf, replaceElement, type XmlElement } from "./xml.js";

export const CONTENT_TYPES_PART = "[Content_Types].xml";
export const PACKAGE_RELS_PART = "_rels/.rels";

const RELATIONSHIPS_NS = "http://schemas.openxmlformats.org/package/2006/relationships";
export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

export interface PackagePartLink {
  /** The part's path in the ZIP, e.g. "docProps/custom.xml". */
  readonly path: string;
  readonly contentType: string;
  readonly relationshipType: string;
}

export class PackageError extends Error {
  override name = "PackageError";
}

function parseRoot(source: string, local: string, part: string): XmlElement {
  let root: XmlElement;
  try {
    root = parseXml(source);
  } catch (error) {
    throw new PackageError(`${part} is malformed: ${(error as Error).message}`);
  }
  if (!hasLocalName(root.name, local)) throw new PackageError(`${part} has no ${local} root element`);
  return root;
}

function qualified(root: XmlElement, local: string): string {
  const prefix = prefixOf(root.name);
  return prefix ? `${prefix}:${local}` : local;
}

/** Normalises a part name or a package-relative target for comparison: no leading "/", no "./", lower case. */
function normalisedPartName(name: string): string {
  return name
    .split("/")
    .filter((segment) => segment !== "" && segment !== ".")
    .join("/")
    .toLowerCase();
}

function ensureContentType(parts: PackageParts, link: PackagePartLink, modified: Date): void {
  const part = parts.read(CONTENT_TYPES_PART, true);
  if (!part) throw new PackageError(`not a DOCX package: ${CONTENT_TYPES_PART} is missing`);
  const root = parseRoot(part.source, "Types", CONTENT_TYPES_PART);
  const wanted = normalisedPartName(link.path);
  const existing = childElements(root).find(
    (element) => hasLocalName(element.name, "Override") && normalisedPartName(element.attributes.get("PartName") ?? "") === wanted,
  );
  if (existing?.attributes.get("ContentType") === link.contentType) return;
  const name = qualified(root, "Override");
  const markup = `<${name} PartName="/${escapeXml(link.path)}" ContentType="${escapeXml(link.contentType)}"/>`;
  const source = existing ? replaceElement(part.source, existing, markup) : appendChild(part.source, root, markup);
  parts.write(CONTENT_TYPES_PART, source, modified, part.encoding);
}

function relationshipMarkup(name: string, id: string, link: PackagePartLink): string {
  return `<${name} Id="${escapeXml(id)}" Type="${escapeXml(link.relationshipType)}" Target="${escapeXml(link.path)}"/>`;
}

function ensureRelationship(parts: PackageParts, link: PackagePartLink, modified: Date): void {
  const part = parts.read(PACKAGE_RELS_PART, true);
  if (!part) {
    const source = `${XML_DECLARATION}<Relationships xmlns="${RELATIONSHIPS_NS}">${relationshipMarkup("Relationship", "rId1", link)}</Relationships>`;
    parts.write(PACKAGE_RELS_PART, source, modified);
    return;
  }
  const root = parseRoot(part.source, "Relationships", PACKAGE_RELS_PART);
  const relationships = childElements(root).filter((element) => hasLocalName(element.name, "Relationship"));
  const sameType = relationships.filter((element) => element.attributes.get("Type") === link.relationshipType);
  const wanted = normalisedPartName(link.path);
  if (sameType.some((element) => normalisedPartName(element.attributes.get("Target") ?? "") === wanted)) return;
  const name = qualified(root, "Relationship");
  let source: string;
  const [other] = sameType;
  if (other) {
    // A package has one part of each of these types: point the existing relationship at ours.
    source = replaceElement(part.source, other, relationshipMarkup(name, other.attributes.get("Id") ?? "rId1", link));
  } else {
    const ids = new Set(relationships.map((element) => element.attributes.get("Id")));
    let n = relationships.length + 1;
    while (ids.has(`rId${n}`)) n++;
    source = appendChild(part.source, root, relationshipMarkup(name, `rId${n}`, link));
  }
  parts.write(PACKAGE_RELS_PART, source, modified, part.encoding);
}

/** Makes sure the package declares the part's content type and links it from the package relationships. */
export function registerPackagePart(parts: PackageParts, link: PackagePartLink, modified: Date): void {
  ensureContentType(parts, link, modified);
  ensureRelationship(parts, link, modified);
}
