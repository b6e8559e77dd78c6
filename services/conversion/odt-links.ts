import { DOMParser, XMLSerializer, type Element } from "@xmldom/xmldom";
import { strFromU8, strToU8, unzipSync, zipSync, type Zippable } from "fflate";
import { checkXmlShape, XML_LIMITS, type XmlLimits } from "../core/xml-shape.js";

const XLINK = "http://www.w3.org/1999/xlink";
const TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0";
const DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0";

/** Elements whose xlink:href is a link the reader follows (hyperlinks, image map areas): never fetched, so kept. */
const HYPERLINKS = new Set([`${TEXT} a`, `${DRAW} a`, `${DRAW} area-rectangle`, `${DRAW} area-circle`, `${DRAW} area-polygon`]);

/**
 * True when an ODF reference points inside the package ("Pictures/1.png",
 * "./Object 1"), as LibreOffice decides it (SvXMLImport::IsPackageURL): no
 * scheme, not absolute, not up a level. Anything else is outside the
 * document: another file of the machine, or a URL.
 */
export function isPackageReference(href: string): boolean {
  const reference = href.trim();
  if (reference.startsWith("/") || reference.startsWith("..") || reference.startsWith("\\")) return false;
  const colon = reference.indexOf(":");
  const slash = reference.indexOf("/");
  return colon < 0 || (slash >= 0 && slash < colon);
}

/**
 * An ODT that names nothing outside itself: every xlink:href that points
 * outside the package is removed, but those of hyperlinks. LibreOffice's
 * BlockUntrustedRefererLinks (libreoffice-profile.ts) stops linked images and
 * objects, but 7.4 still loads a paragraph's or page's linked background
 * image (style:background-image, draw:fill-image) and the template named in
 * meta.xml (meta:template) over HTTP and from local files
 * (test/integration/convert-linked-content.test.ts). Parts with nothing to
 * remove are kept byte for byte; a package with nothing to remove is returned
 * as it came.
 */
export function stripOdtLinks(bytes: Buffer): Buffer {
  const parts = unzipSync(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  let changed = false;
  let elements = 0;
  for (const [name, data] of Object.entries(parts)) {
    if (!name.endsWith(".xml") || name.startsWith("META-INF/")) continue;
    const xml = strFromU8(data);
    if (!mayReferOutside(xml)) continue;
    elements = checkXmlShape(xml, name, elements, ODT_XML_LIMITS);
    const cleaned = withoutExternalReferences(xml);
    if (cleaned !== undefined) {
      parts[name] = strToU8(cleaned);
      changed = true;
    }
  }
  if (!changed) return bytes;
  // the mimetype entry stays first and uncompressed, as ODF wants
  const zipped: Zippable = {};
  for (const [name, data] of Object.entries(parts)) zipped[name] = name === "mimetype" ? [data, { level: 0 }] : data;
  return Buffer.from(zipSync(zipped, { level: 6 }));
}

/**
 * The XML an ODT's parts that may point outside it hold, together, before
 * they are parsed: more than a template's, since a long document converts
 * with its links, and read on the sanitizer thread, not the one that answers
 * requests (a million elements took that thread past its heap).
 */
const ODT_XML_LIMITS: XmlLimits = { ...XML_LIMITS, maxElements: 500_000 };

/** A reference attribute whose value may point outside the package (a cheap test before parsing; entities and "./" parse too). */
const MAYBE_EXTERNAL = /href\s*=\s*["']\s*(?:[/\\&.]|[A-Za-z][\w+.-]*:)/;

const mayReferOutside = (xml: string) => xml.includes(XLINK) && MAYBE_EXTERNAL.test(xml);

function withoutExternalReferences(xml: string): string | undefined {
  const document = new DOMParser({ onError: () => {} }).parseFromString(xml, "text/xml");
  let changed = false;
  const walk = (element: Element) => {
    const href = element.getAttributeNodeNS(XLINK, "href");
    if (href && !HYPERLINKS.has(`${element.namespaceURI} ${element.localName}`) && !isPackageReference(href.value)) {
      element.removeAttributeNode(href);
      changed = true;
    }
    for (let child = element.firstChild; child; child = child.nextSibling) if (child.nodeType === 1) walk(child as Element);
  };
  if (document.documentElement) walk(document.documentElement);
  return changed ? new XMLSerializer().serializeToString(document) : undefined;
}
