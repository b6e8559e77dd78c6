// One subset of a face as a PDF font, the way pdf-lib embeds a subset (Type0,
// Identity-H, CIDFontType2 with CIDToGIDMap Identity, CID = the glyph's index in the
// subset, FontFile2 and ToUnicode), but built from glyph ids. The font program, widths
// and ToUnicode map are encoded and compressed once (`encode`); writing the font into
// a document (`write`) only adds five objects around those bytes, so a subset made
// once per process costs a document next to nothing.
import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";
import type fontkit from "@pdf-lib/fontkit";
import { PDFInvalidObject, PDFRawStream, PDFString, numberToString, type PDFContext, type PDFRef } from "pdf-lib";
import type { LoadedFace } from "./fonts.js";
import { hex4 } from "./pdf-syntax.js";
import type { ShapedGlyph } from "./shaping.js";

type FontkitSubset = ReturnType<ReturnType<typeof fontkit.create>["createSubset"]>;

interface EncodeStream {
  push(chunk: Uint8Array | null): boolean;
  end(): void;
}

let EncodeStreamClass: (new () => EncodeStream) | undefined;

/**
 * The TrueType program of `subset`. fontkit's `encodeStream()` encodes on its browser
 * nextTick shim, a setTimeout: a millisecond of idle time per subset. Its stream class
 * (found by calling `encodeStream` on a stand-in whose encode does nothing) takes the
 * same writes synchronously when `push` collects them.
 */
function encodeProgram(subset: FontkitSubset): Buffer {
  const proto = Object.getPrototypeOf(subset) as { encodeStream(this: { encode(): void }): object };
  EncodeStreamClass ??= proto.encodeStream.call({ encode() {} }).constructor as new () => EncodeStream;
  const stream = new EncodeStreamClass();
  const chunks: Uint8Array[] = [];
  stream.push = (chunk) => {
    if (chunk) chunks.push(chunk);
    return true;
  };
  (subset as unknown as { encode(stream: EncodeStream): void }).encode(stream);
  stream.end();
  return Buffer.concat(chunks);
}

/** Six upper-case letters (PDF 32000-1 §9.6.4), derived from the seed so output is reproducible. */
function subsetTag(seed: string): string {
  const digest = createHash("sha256").update(seed).digest();
  let tag = "";
  for (let i = 0; i < 6; i++) tag += String.fromCharCode(65 + (digest[i]! % 26));
  return tag;
}

/** The /W array: runs of consecutive CIDs with their widths (glyph space, 1000 per em). */
function widthsArray(glyphs: ReadonlyMap<number, ShapedGlyph>, scale: number): string {
  const runs: { first: number; widths: string[] }[] = [];
  for (const [cid, glyph] of [...glyphs].sort(([a], [b]) => a - b)) {
    const run = runs.at(-1);
    const width = numberToString(glyph.advance * scale);
    if (run && run.first + run.widths.length === cid) run.widths.push(width);
    else runs.push({ first: cid, widths: [width] });
  }
  return `[${runs.map((run) => `${run.first} [${run.widths.join(" ")}]`).join(" ")}]`;
}

/** The ToUnicode CMap (bfchar sections of at most 100 entries, as the CMap format allows). */
function toUnicodeCMap(glyphs: ReadonlyMap<number, ShapedGlyph>): string {
  const entries = [...glyphs].map(([cid, glyph]) => {
    const text = String.fromCodePoint(...glyph.codePoints);
    let units = "";
    for (let i = 0; i < text.length; i++) units += hex4(text.charCodeAt(i));
    return `<${hex4(cid)}> <${units}>`;
  });
  const sections: string[] = [];
  for (let i = 0; i < entries.length; i += 100) {
    const chunk = entries.slice(i, i + 100);
    sections.push(`${chunk.length} beginbfchar\n${chunk.join("\n")}\nendbfchar`);
  }
  return [
    "/CIDInit /ProcSet findresource begin",
    "12 dict begin",
    "begincmap",
    "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
    "/CMapName /Adobe-Identity-UCS def",
    "/CMapType 2 def",
    "1 begincodespacerange",
    "<0000> <ffff>",
    "endcodespacerange",
    ...sections,
    "endcmap",
    "CMapName currentdict /CMap defineresource pop",
    "end",
    "end",
  ].join("\n");
}

/** Font flags as pdf-lib derives them (after pdfkit): symbolic, plus what the font says. */
function fontFlags(face: LoadedFace): number {
  const { font } = face;
  const familyClass = font["OS/2"]?.sFamilyClass ?? 0;
  let flags = 1 << 2; // symbolic
  if (font.post.isFixedPitch) flags |= 1 << 0;
  if (familyClass >= 1 && familyClass <= 7) flags |= 1 << 1;
  if (familyClass === 10) flags |= 1 << 3;
  if (font.head.macStyle.italic) flags |= 1 << 6;
  return flags;
}

/** Collects glyphs of one face into a subset; `encode` turns it into a SubsetFont. */
export class SubsetBuilder {
  readonly #face: LoadedFace;
  readonly #subset: FontkitSubset;
  /** By CID; the first glyph seen for a glyph id gives its ToUnicode text. */
  readonly #glyphs = new Map<number, ShapedGlyph>();

  constructor(face: LoadedFace) {
    this.#face = face;
    this.#subset = face.font.createSubset();
  }

  /** The CID of `glyph` in this subset, adding it if new. */
  add(glyph: ShapedGlyph): number {
    const cid = this.#subset.includeGlyph(glyph.id);
    if (!this.#glyphs.has(cid)) this.#glyphs.set(cid, glyph);
    return cid;
  }

  /** Encodes the subset; `tagSeed` determines its subset tag. */
  encode(tagSeed: string): SubsetFont {
    const program = encodeProgram(this.#subset);
    return new SubsetFont({
      face: this.#face,
      name: `${subsetTag(tagSeed)}+${this.#face.font.postscriptName ?? this.#face.name}`,
      program: deflateSync(program),
      programLength: program.length,
      widths: Buffer.from(widthsArray(this.#glyphs, this.#face.scale * 1000), "latin1"),
      toUnicode: deflateSync(Buffer.from(toUnicodeCMap(this.#glyphs), "latin1")),
    });
  }
}

interface SubsetFontBytes {
  face: LoadedFace;
  /** The subset-tagged PostScript name. */
  name: string;
  /** Deflated TrueType program, and its length before deflating (/Length1). */
  program: Uint8Array;
  programLength: number;
  /** The /W array, as PDF syntax. */
  widths: Uint8Array;
  /** Deflated ToUnicode CMap. */
  toUnicode: Uint8Array;
}

export class SubsetFont {
  readonly #bytes: SubsetFontBytes;

  constructor(bytes: SubsetFontBytes) {
    this.#bytes = bytes;
  }

  /** Adds the font's objects to `context` and returns the Type0 font dictionary's reference. */
  write(context: PDFContext): PDFRef {
    const { face, name, program, programLength, widths, toUnicode } = this.#bytes;
    const { font } = face;
    const scale = face.scale * 1000;
    const fontFile = context.register(PDFRawStream.of(context.obj({ Filter: "FlateDecode", Length1: programLength }), program));
    const descriptor = context.register(
      context.obj({
        Type: "FontDescriptor",
        FontName: name,
        Flags: fontFlags(face),
        FontBBox: [font.bbox.minX * scale, font.bbox.minY * scale, font.bbox.maxX * scale, font.bbox.maxY * scale],
        ItalicAngle: font.italicAngle,
        Ascent: font.ascent * scale,
        Descent: font.descent * scale,
        CapHeight: (font.capHeight || font.ascent) * scale,
        XHeight: (font.xHeight || 0) * scale,
        StemV: 0,
        FontFile2: fontFile,
      }),
    );
    const cidFont = context.obj({
      Type: "Font",
      Subtype: "CIDFontType2",
      CIDToGIDMap: "Identity",
      BaseFont: name,
      CIDSystemInfo: { Registry: PDFString.of("Adobe"), Ordering: PDFString.of("Identity"), Supplement: 0 },
      FontDescriptor: descriptor,
      W: PDFInvalidObject.of(widths),
    });
    return context.register(
      context.obj({
        Type: "Font",
        Subtype: "Type0",
        BaseFont: name,
        Encoding: "Identity-H",
        DescendantFonts: [context.register(cidFont)],
        ToUnicode: context.register(PDFRawStream.of(context.obj({ Filter: "FlateDecode" }), toUnicode)),
      }),
    );
  }
}
