import type { Element } from "@xmldom/xmldom";
import type { ContentControl } from "./content-control.js";
import type { ImageParts } from "./image-parts.js";
import type { ImageValue } from "./image-value.js";
import { A, descendants, R, WP } from "./wordml.js";

const EMU_PER_PX = 9525; // 914,400 EMU per inch at 96 pixels per inch

/** Pixels of the image's box; without them the control's own box, the image fitted in with its proportions. */
export interface Dimensions {
  width: number;
  height: number;
}

/**
 * Puts the image in a picture control: the control's picture pointed at the
 * image's media part (added by `media` the first time), and sized. Returns
 * why it cannot, or undefined.
 */
export function fillImage(control: ContentControl, image: ImageValue, dimensions: Dimensions | undefined, media: ImageParts): string | undefined {
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
  blip.setAttributeNS(R, "r:embed", media.relationshipId(control.part, image));
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
