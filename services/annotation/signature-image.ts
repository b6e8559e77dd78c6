import { existsSync } from "node:fs";
import { createCanvas, GlobalFonts, type SKRSContext2D } from "@napi-rs/canvas";
import type { ImageValue } from "./image-value.js";

/** Liberation Serif Italic (fonts-liberation2, installed with LibreOffice) draws the name; any serif when it is missing. */
const NAME_FONT_PATHS = ["/usr/share/fonts/truetype/liberation2/LiberationSerif-Italic.ttf", "/usr/share/fonts/truetype/liberation/LiberationSerif-Italic.ttf"];
const NAME_FACE = "DocService Signature";
const NAME_PX = 96;
const LABEL_PX = 28;
/**
 * The drawing's bounds. A name's length in characters does not bound its
 * width in pixels (one glyph, such as U+FDFD, can be wider than twenty
 * letters), so each text is measured: it is drawn smaller, down to its
 * smallest size, until it fits the width, and what still does not fit is cut
 * and ends in "…". The image is fitted into the control's box anyway, so a
 * wider one would only be scaled down further; and a canvas this size is
 * far inside what Skia and libpng take (libpng refused the 20,000-character
 * names that were drawn whole).
 */
export const MAX_TEXT_WIDTH_PX = 2400;
const MIN_NAME_PX = 24;
const MIN_LABEL_PX = 14;
const PADDING_PX = 16;
const INK = "#1a2a6c";
const LABEL_INK = "#555555";

let registered = false;

function nameFace(): string {
  if (!registered) {
    const path = NAME_FONT_PATHS.find((candidate) => existsSync(candidate));
    if (path) GlobalFonts.registerFromPath(path, NAME_FACE);
    registered = true;
  }
  return `"${NAME_FACE}", serif`;
}

/** A text as drawn: its font, size and width, cut to fit when it had to be. */
interface FittedText {
  text: string;
  font: string;
  px: number;
  width: number;
}

/**
 * `text` in `style px face`, at `px` when it fits in MAX_TEXT_WIDTH_PX, else
 * smaller down to `minPx`, else at `minPx` with as many of its characters as
 * fit, then "…".
 */
function fitted(measure: SKRSContext2D, text: string, style: string, face: string, px: number, minPx: number): FittedText {
  const fontAt = (size: number) => `${style}${size}px ${face}`;
  const widthAt = (size: number, shown: string) => {
    measure.font = fontAt(size);
    const width = measure.measureText(shown).width;
    return Number.isFinite(width) ? width : Infinity;
  };
  const full = widthAt(px, text);
  if (full <= MAX_TEXT_WIDTH_PX) return { text, font: fontAt(px), px, width: full };
  const scaled = Math.floor((px * MAX_TEXT_WIDTH_PX) / full);
  if (scaled >= minPx) {
    const width = widthAt(scaled, text);
    if (width <= MAX_TEXT_WIDTH_PX) return { text, font: fontAt(scaled), px: scaled, width };
  }
  // the longest run of whole characters (code points) that fits with the ellipsis, found by bisection
  const characters = Array.from(text);
  let [fits, over] = [0, characters.length];
  while (over - fits > 1) {
    const middle = (fits + over) >> 1;
    if (widthAt(minPx, `${characters.slice(0, middle).join("")}…`) <= MAX_TEXT_WIDTH_PX) fits = middle;
    else over = middle;
  }
  const cut = `${characters.slice(0, fits).join("")}…`;
  return { text: cut, font: fontAt(minPx), px: minPx, width: Math.min(widthAt(minPx, cut), MAX_TEXT_WIDTH_PX) };
}

/**
 * A signature drawn from the signer's name, with an optional label above and
 * below (e.g. "Signed by", the date): a PNG on a transparent background, as
 * wide as its text (at most MAX_TEXT_WIDTH_PX and the padding), drawn by
 * Skia (@napi-rs/canvas) so that every script the system fonts cover comes out.
 */
export async function signatureImage(name: string, labels: { top?: string; bottom?: string }): Promise<ImageValue> {
  const measure = createCanvas(1, 1).getContext("2d");
  const drawnName = fitted(measure, name, "italic ", nameFace(), NAME_PX, MIN_NAME_PX);
  const top = labels.top ? fitted(measure, labels.top, "", "sans-serif", LABEL_PX, MIN_LABEL_PX) : undefined;
  const bottom = labels.bottom ? fitted(measure, labels.bottom, "", "sans-serif", LABEL_PX, MIN_LABEL_PX) : undefined;
  const topHeight = top ? top.px * 1.5 : 0;
  const bottomHeight = bottom ? bottom.px * 1.5 : 0;
  const width = Math.ceil(Math.max(drawnName.width, top?.width ?? 0, bottom?.width ?? 0) + 2 * PADDING_PX);
  const height = Math.ceil(topHeight + drawnName.px * 1.4 + bottomHeight + 2 * PADDING_PX);

  const canvas = createCanvas(width, height);
  const context = canvas.getContext("2d");
  context.textBaseline = "top";
  if (top) {
    context.font = top.font;
    context.fillStyle = LABEL_INK;
    context.fillText(top.text, PADDING_PX, PADDING_PX);
  }
  context.font = drawnName.font;
  context.fillStyle = INK;
  context.fillText(drawnName.text, PADDING_PX, PADDING_PX + topHeight + drawnName.px * 0.15);
  if (bottom) {
    context.font = bottom.font;
    context.fillStyle = LABEL_INK;
    context.fillText(bottom.text, PADDING_PX, height - PADDING_PX - bottom.px * 1.2);
  }
  // encoded on libuv's thread pool: the PNG is most of the cost (about 30 ns per pixel), the drawing a few hundredths of a millisecond
  return { bytes: await canvas.encode("png"), extension: "png", widthPx: width, heightPx: height };
}
