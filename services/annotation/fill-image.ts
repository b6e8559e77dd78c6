import { posix } from "node:path";
import type { Element } from "@xmldom/xmldom";
import type { ContentControl } from "./content-control.js";
import type { DocxPackage } from "./docx-package.js";
import type { ImageValue } from "./image-value.js";
import { A, descendants, R, WP } from "./wordml.js";

const EMU_PER_PX = 9525; // 914,400 EMU per inch at 96 pixels per inch
const IMAGE_RELATIONSHIP = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image";
const RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships";
const CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types";

/** Pixels of the image's box; without them the control's own box, the image fitted in with its proportions. */
export interface Dimensions {
  width: number;
  height: number;
}

/**
 * Puts the image in a picture control: a new media part related to the
 * control's part, the control's picture pointed at it and sized. Returns why
 * it cannot, or undefined.
 */
export function fillImage(docx: DocxPackage, control: ContentControl, image: ImageValue, dimensions: Dimensions | undefined): string | undefined {
  const content = control.content;
  const drawing = content && (descendants(content, WP, "inline")[0] ?? descendants(content, WP, "anchor")[0]);
  const extent = drawing && descendants(drawing, WP, "extent")[0];
  const blip = drawing && descendants(drawing, A, "blip")[0];
  if (!drawing || !extent || !blip) return `${control.describe()} holds no picture to replace`;
  const [cx, cy] = dimensions
    ? [dimensions.width * EMU_PER_PX, dimensions.height * EMU_PER_PX]
    : fit(image, Number(extent.getAttribute("cx")) || image.widthPx * EMU_PER_PX, Number(extent.getAttribute("cy")) || image.heightPx * EMU_PER_PX);
  setSize(extent, cx, cy);
  const transform = descendants(drawing, A, "xfrm")[0];
  const transformExtent = transform && descendants(transform, A, "ext")[0];
  if (transformExtent) setSize(transformExtent, cx, cy);
  blip.setAttributeNS(R, "r:embed", addImagePart(docx, control.part, image));
  control.markFilled();
  return undefined;
}

function fit(image: ImageValue, boxWidth: number, boxHeight: number): [number, number] {
  const scale = Math.min(boxWidth / image.widthPx, boxHeight / image.heightPx);
  return [Math.round(image.widthPx * scale), Math.round(image.heightPx * scale)];
}

function setSize(element: Element, cx: number, cy: number): void {
  element.setAttribute("cx", String(Math.round(cx)));
  element.setAttribute("cy", String(Math.round(cy)));
}

/** Adds the image as word/media/annotated-N.EXT, related to `part`; returns the relationship id. */
function addImagePart(docx: DocxPackage, part: string, image: ImageValue): string {
  let n = 1;
  while (docx.has(`word/media/annotated-${n}.${image.extension}`)) n++;
  const media = `word/media/annotated-${n}.${image.extension}`;
  docx.put(media, new Uint8Array(image.bytes));
  ensureDefaultContentType(docx, image.extension);

  const relsPart = posix.join(posix.dirname(part), "_rels", `${posix.basename(part)}.rels`);
  if (!docx.has(relsPart)) docx.put(relsPart, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${RELATIONSHIPS}"/>`);
  const rels = docx.xml(relsPart)!;
  const ids = new Set(Array.from(rels.getElementsByTagNameNS(RELATIONSHIPS, "Relationship")).map((r) => r.getAttribute("Id")));
  let id = `rIdAnnotated${n}`;
  for (let i = 1; ids.has(id); i++) id = `rIdAnnotated${n}_${i}`;
  const relationship = rels.createElementNS(RELATIONSHIPS, "Relationship");
  relationship.setAttribute("Id", id);
  relationship.setAttribute("Type", IMAGE_RELATIONSHIP);
  relationship.setAttribute("Target", posix.relative(posix.dirname(part), media));
  rels.documentElement!.appendChild(relationship);
  return id;
}

function ensureDefaultContentType(docx: DocxPackage, extension: string): void {
  const types = docx.xml("[Content_Types].xml")!;
  const known = Array.from(types.getElementsByTagNameNS(CONTENT_TYPES, "Default")).some((d) => d.getAttribute("Extension")?.toLowerCase() === extension);
  if (known) return;
  const entry = types.createElementNS(CONTENT_TYPES, "Default");
  entry.setAttribute("Extension", extension);
  entry.setAttribute("ContentType", `image/${extension}`);
  types.documentElement!.appendChild(entry);
}
