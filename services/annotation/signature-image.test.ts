import assert from "node:assert/strict";
import { test } from "node:test";
import { imageSize } from "image-size";
import { MAX_TEXT_WIDTH_PX, signatureImage } from "./signature-image.js";

// The image is as wide as its widest text up to MAX_TEXT_WIDTH_PX, plus the padding on both sides.
const MAX_WIDTH = MAX_TEXT_WIDTH_PX + 32;

test("a signature's width is bounded whatever its texts: long names and labels are drawn smaller, then cut with an ellipsis", async () => {
  const short = await signatureImage("Jane Doe", { top: "Signed by", bottom: "2026-11-25" });
  assert.ok(short.widthPx > short.heightPx && short.widthPx < 600, `${short.widthPx}×${short.heightPx}`);
  const names = [
    "Ada Augusta King, Countess of Lovelace ".repeat(6).slice(0, 200),
    "W".repeat(200),
    // one glyph as wide as twenty letters: characters do not bound pixels
    "\uFDFD".repeat(200),
    "👩‍👩‍👧‍👦".repeat(28),
    // longer than a request may send (200), and what libpng refused (its width over a million pixels) when drawn whole
    "Al".repeat(50_000),
  ];
  for (const name of names) {
    const started = performance.now();
    const image = await signatureImage(name, { top: "L".repeat(200), bottom: "\uFDFD".repeat(200) });
    const elapsed = performance.now() - started;
    assert.ok(image.widthPx <= MAX_WIDTH, `${name.slice(0, 20)}…: ${image.widthPx} px wide`);
    assert.deepEqual(imageSize(image.bytes), { height: image.heightPx, width: image.widthPx, type: "png" });
    assert.ok(elapsed < 1000, `${name.slice(0, 20)}…: ${elapsed} ms`);
  }
});
