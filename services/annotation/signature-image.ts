import { existsSync } from "node:fs";
import { createCanvas, GlobalFonts } from "@napi-rs/canvas";
import type { ImageValue } from "./image-value.js";

/** Liberation Serif Italic (fonts-liberation2, installed with LibreOffice) draws the name; any serif when it is missing. */
const NAME_FONT_PATHS = ["/usr/share/fonts/truetype/liberation2/LiberationSerif-Italic.ttf", "/usr/share/fonts/truetype/liberation/LiberationSerif-Italic.ttf"];
const NAME_FACE = "DocService Signature";
const NAME_PX = 96;
const LABEL_PX = 28;
const PADDING_PX = 16;
const INK = "#1a2a6c";
const LABEL_INK = "#555555";

let registered = false;

function nameFont(): string {
  if (!registered) {
    const path = NAME_FONT_PATHS.find((candidate) => existsSync(candidate));
    if (path) GlobalFonts.registerFromPath(path, NAME_FACE);
    registered = true;
  }
  return `italic ${NAME_PX}px "${NAME_FACE}", serif`;
}

/**
 * A signature drawn from the signer's name, with an optional label above and
 * below (e.g. "Signed by", the date): a PNG on a transparent background, as
 * wide as its text, drawn by Skia (@napi-rs/canvas) so that every script the
 * system fonts cover comes out.
 */
export function signatureImage(name: string, labels: { top?: string; bottom?: string }): ImageValue {
  const font = nameFont();
  const labelFont = `${LABEL_PX}px sans-serif`;
  const measure = createCanvas(1, 1).getContext("2d");
  measure.font = font;
  const nameWidth = measure.measureText(name).width;
  measure.font = labelFont;
  const labelWidth = Math.max(0, ...[labels.top, labels.bottom].map((label) => (label ? measure.measureText(label).width : 0)));
  const topHeight = labels.top ? LABEL_PX * 1.5 : 0;
  const bottomHeight = labels.bottom ? LABEL_PX * 1.5 : 0;
  const width = Math.ceil(Math.max(nameWidth, labelWidth) + 2 * PADDING_PX);
  const height = Math.ceil(topHeight + NAME_PX * 1.4 + bottomHeight + 2 * PADDING_PX);

  const canvas = createCanvas(width, height);
  const context = canvas.getContext("2d");
  context.textBaseline = "top";
  if (labels.top) {
    context.font = labelFont;
    context.fillStyle = LABEL_INK;
    context.fillText(labels.top, PADDING_PX, PADDING_PX);
  }
  context.font = font;
  context.fillStyle = INK;
  context.fillText(name, PADDING_PX, PADDING_PX + topHeight + NAME_PX * 0.15);
  if (labels.bottom) {
    context.font = labelFont;
    context.fillStyle = LABEL_INK;
    context.fillText(labels.bottom, PADDING_PX, height - PADDING_PX - LABEL_PX * 1.2);
  }
  return { bytes: canvas.toBuffer("image/png"), extension: "png", widthPx: width, heightPx: height };
}
