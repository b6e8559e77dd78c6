// Which PDF font draws each glyph of one document's certificate pages. Per face, the
// glyphs of its base characters (fonts.ts), and the ligatures among them, come from a
// subset encoded once per process and written into every document as the same bytes;
// any other glyph (another script, CJK, a character outside the base) goes into a
// second subset of that face made for this document only. Both are subsets: the base
// one holds about 220 glyphs, not the face's thousands.
import type { PDFContext, PDFRef } from "pdf-lib";
import type { FaceName, FontSet, LoadedFace } from "./fonts.js";
import { hex4 } from "./pdf-syntax.js";
import { advanceOf, shaperFor, type ShapedGlyph } from "./shaping.js";
import { SubsetBuilder, type SubsetFont } from "./subset-font.js";

/** Consecutive glyphs drawn with one PDF font. */
export interface FontRun {
  /** The font's key in the page's /Font resources. */
  readonly font: string;
  /** The glyphs' CIDs, as the hex digits of a PDF string. */
  readonly hex: string;
  /** Advance in points at size 1. */
  readonly width: number;
}

interface BaseSubset {
  font: SubsetFont;
  /** By glyph id: its CID and the text its ToUnicode entry gives. */
  glyphs: Map<number, { cid: number; codePoints: readonly number[] }>;
}

const baseSubsets = new WeakMap<LoadedFace, BaseSubset | null>();

function baseSubset(face: LoadedFace): BaseSubset | null {
  let base = baseSubsets.get(face);
  if (base === undefined) baseSubsets.set(face, (base = face.baseChars ? encodeBaseSubset(face) : null));
  return base;
}

function encodeBaseSubset(face: LoadedFace): BaseSubset {
  const { font } = face;
  const builder = new SubsetBuilder(face);
  const glyphs: BaseSubset["glyphs"] = new Map();
  const add = (glyph: ShapedGlyph) => {
    if (!glyphs.has(glyph.id)) glyphs.set(glyph.id, { cid: builder.add(glyph), codePoints: glyph.codePoints });
  };
  for (const char of face.baseChars) {
    const codePoint = char.codePointAt(0)!;
    if (!font.hasGlyphForCodePoint(codePoint)) continue;
    const { id, advanceWidth } = font.glyphForCodePoint(codePoint);
    add({ id, advance: advanceWidth, codePoints: [codePoint] });
  }
  for (const { components, glyph } of shaperFor(font).ligaturesOf(new Set(glyphs.keys()))) {
    // fontkit keeps one glyph object per id, with the code points it was first asked
    // for, and its layout reports those: take them from the same object
    const ligature = font.getGlyph(glyph, components.flatMap((component) => glyphs.get(component)!.codePoints));
    add({ id: glyph, advance: ligature.advanceWidth, codePoints: ligature.codePoints });
  }
  return { font: builder.encode(`base/${face.name}/${[...glyphs.keys()].join(",")}`), glyphs };
}

/** The runs of glyph runs (from TextEngine's cache) drawn with the base subset alone: the same in every document. */
const baseRuns = new WeakMap<readonly ShapedGlyph[], readonly FontRun[]>();

/** The CID of `glyph` in the base subset, if it is there with the same text. */
function baseCid(base: BaseSubset | null, glyph: ShapedGlyph): number | undefined {
  const shared = base?.glyphs.get(glyph.id);
  return shared && sameCodePoints(shared.codePoints, glyph.codePoints) ? shared.cid : undefined;
}

const sameCodePoints = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((value, i) => value === b[i]);

export class DocumentFonts {
  readonly #fonts: FontSet;
  readonly #seed: string;
  readonly #usedBases = new Set<FaceName>();
  readonly #extras = new Map<FaceName, SubsetBuilder>();

  /** `seed` makes the subset tags of this document's own subsets. */
  constructor(fonts: FontSet, seed: string) {
    this.#fonts = fonts;
    this.#seed = seed;
  }

  /** The glyphs of a run of `face`, as runs of the PDF fonts that draw them. */
  runs(face: FaceName, glyphs: readonly ShapedGlyph[]): readonly FontRun[] {
    let runs = baseRuns.get(glyphs);
    if (runs) {
      this.#usedBases.add(face);
      return runs;
    }
    const base = baseSubset(this.#fonts[face]);
    const cids = glyphs.map((glyph) => baseCid(base, glyph));
    if (cids.every((cid) => cid !== undefined)) {
      this.#usedBases.add(face);
      baseRuns.set(glyphs, (runs = [this.#run(face, face, glyphs, cids)]));
      return runs;
    }
    const mixed: FontRun[] = [];
    for (let start = 0; start < glyphs.length; ) {
      const inBase = cids[start] !== undefined;
      let end = start + 1;
      while (end < glyphs.length && (cids[end] !== undefined) === inBase) end++;
      const piece = glyphs.slice(start, end);
      if (inBase) {
        this.#usedBases.add(face);
        mixed.push(this.#run(face, face, piece, cids.slice(start, end) as number[]));
      } else {
        mixed.push(this.#run(`${face}-extra`, face, piece, piece.map((glyph) => this.#extra(face).add(glyph))));
      }
      start = end;
    }
    return mixed;
  }

  #run(font: string, face: FaceName, glyphs: readonly ShapedGlyph[], cids: readonly number[]): FontRun {
    return { font, hex: cids.map(hex4).join(""), width: advanceOf(glyphs) * this.#fonts[face].scale };
  }

  #extra(face: FaceName): SubsetBuilder {
    let builder = this.#extras.get(face);
    if (!builder) this.#extras.set(face, (builder = new SubsetBuilder(this.#fonts[face])));
    return builder;
  }

  /** Writes the fonts `runs` used into `context`; returns their /Font resources. */
  write(context: PDFContext): Record<string, PDFRef> {
    const resources: Record<string, PDFRef> = {};
    for (const face of this.#usedBases) resources[face] = baseSubset(this.#fonts[face])!.font.write(context);
    for (const [face, builder] of this.#extras) resources[`${face}-extra`] = builder.encode(`${this.#seed}/${face}`).write(context);
    return resources;
  }
}
