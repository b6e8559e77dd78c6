// Text for the certificate page: choosing a face per character by glyph coverage,
// a deliberately small subset of bidi ordering, measuring, and wrapping.
//
// Glyphs are drawn as fontkit lays them out (shaping.ts), and fontkit shapes Arabic
// (initial/medial/final forms, lam-alef) and lays a right-to-left run out in visual
// order. What is done here on top: a right-to-left stretch of a line (from its
// first to its last Arabic/Hebrew letter, with no Latin letter between) is cut into
// pieces whose order is reversed, so digits inside it stay left-to-right; the line
// itself is always left-to-right. Not done: the full Unicode Bidirectional Algorithm
// (explicit embeddings, mirrored brackets, right-to-left paragraphs). Bidi control
// characters are removed, so a name cannot reorder the text around it.
import type { FaceName, FontSet, Style } from "./fonts.js";
import { STYLE_CHAINS } from "./fonts.js";
import { RecentCache } from "./recent-cache.js";
import { type ShapedGlyph, advanceOf, shaperFor } from "./shaping.js";

export interface Segment {
  face: FaceName;
  text: string;
}

const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;
const LINE_BREAKS_AND_CONTROLS = /[\p{Cc}\u2028\u2029]/gu;
const RTL_LETTER = /^[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const LETTER = /^\p{L}/u;
const DIGIT = /^\p{Nd}/u;
const FORMAT = /^\p{Cf}+$/u;

/** One line of plain text: no control characters, no bidi controls, single spaces. */
export function sanitize(text: string): string {
  return text.replace(BIDI_CONTROLS, "").replace(LINE_BREAKS_AND_CONTROLS, " ").replace(/ {2,}/g, " ").trim();
}

/** Shortens a value to `max` characters, saying how much was left out. */
export function truncate(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  return `${chars.slice(0, max).join("")}… (${chars.length - max} more characters)`;
}

const graphemes = new Intl.Segmenter("und", { granularity: "grapheme" });
/** Text where every UTF-16 unit is a grapheme cluster of its own (no marks, joiners, surrogates, jamo). */
const SIMPLE = /^[^\p{M}\p{Cf}\u{D800}-\u{DFFF}\u{10000}-\u{10FFFF}\u1100-\u11FF\uFE00-\uFE0F]*$/u;

function clusterTexts(text: string): string[] {
  if (SIMPLE.test(text)) return text.split("");
  return Array.from(graphemes.segment(text), ({ segment }) => segment);
}

type Direction = "rtl" | "ltr" | "digit" | "neutral";

interface Cluster {
  text: string;
  face: FaceName;
  direction: Direction;
}

/** Entries per generation of each cache: a page's own texts many times over. */
const CACHE_GENERATION = 4_096;

/**
 * One cache per style or face, keyed by the text itself: a string keeps its hash
 * once computed, where a key concatenated per lookup is hashed anew every time.
 */
function cachesBy<Name extends string, V>(names: readonly Name[]): Record<Name, RecentCache<V>> {
  return Object.fromEntries(names.map((name) => [name, new RecentCache<V>(CACHE_GENERATION)])) as Record<Name, RecentCache<V>>;
}

const STYLES = Object.keys(STYLE_CHAINS) as Style[];
const FACES: readonly FaceName[] = [...new Set(Object.values(STYLE_CHAINS).flat())];

/** The lines of one text at one size and width. */
interface Wrapped {
  size: number;
  maxWidth: number;
  lines: readonly string[];
}
/** Layouts a text is kept for: a page has a few column widths. */
const WRAPPINGS_PER_TEXT = 8;

export class TextEngine {
  readonly #fonts: FontSet;
  readonly #clusters = cachesBy<Style, Cluster | null>(STYLES);
  readonly #glyphs = cachesBy<FaceName, { glyphs: readonly ShapedGlyph[]; width: number }>(FACES);
  readonly #lines = cachesBy<Style, Wrapped[]>(STYLES);
  readonly #segments = cachesBy<Style, readonly Segment[]>(STYLES);

  constructor(fonts: FontSet) {
    this.#fonts = fonts;
  }

  #covers(face: FaceName, cluster: string): boolean {
    const font = this.#fonts[face].font;
    for (const char of cluster) if (!font.hasGlyphForCodePoint(char.codePointAt(0)!)) return false;
    return true;
  }

  /** The face for one grapheme cluster: the first of the style's chain that has all its glyphs. */
  #cluster(style: Style, text: string): Cluster | null {
    const cached = this.#clusters[style].get(text);
    if (cached !== undefined) return cached;
    const chain = STYLE_CHAINS[style];
    let face = chain.find((name) => this.#covers(name, text));
    let shown = text;
    if (!face) {
      if (FORMAT.test(text)) return this.#clusters[style].set(text, null); // invisible: zero-width joiners and the like
      // a cluster no face covers whole: its base character alone, else the replacement character
      const base = [...text][0]!;
      face = chain.find((name) => this.#covers(name, base));
      shown = face ? base : "\uFFFD";
      face ??= chain.find((name) => this.#covers(name, shown)) ?? chain[0];
      if (!this.#covers(face, shown)) shown = "?";
    }
    const direction: Direction = RTL_LETTER.test(shown) && LETTER.test(shown)
      ? "rtl"
      : LETTER.test(shown)
        ? "ltr"
        : DIGIT.test(shown)
          ? "digit"
          : "neutral";
    return this.#clusters[style].set(text, { text: shown, face, direction });
  }

  #clustersOf(style: Style, text: string): Cluster[] {
    const clusters: Cluster[] = [];
    for (const segment of clusterTexts(text)) {
      const cluster = this.#cluster(style, segment);
      if (cluster) clusters.push(cluster);
    }
    return clusters;
  }

  /** The text as face runs in drawing order, left to right. */
  segments(style: Style, text: string): readonly Segment[] {
    const cache = this.#segments[style];
    return cache.get(text) ?? cache.set(text, this.#computeSegments(style, text));
  }

  #computeSegments(style: Style, text: string): Segment[] {
    const clusters = this.#clustersOf(style, text);
    const out: Segment[] = [];
    const push = (into: Segment[], cluster: Cluster, joinable: (previous: Segment) => boolean) => {
      const last = into.at(-1);
      if (last && last.face === cluster.face && joinable(last)) last.text += cluster.text;
      else into.push({ face: cluster.face, text: cluster.text });
    };
    for (let i = 0; i < clusters.length; ) {
      const cluster = clusters[i]!;
      if (cluster.direction !== "rtl") {
        // left-to-right text; an ltr piece never joins a run that ended an rtl stretch
        push(out, cluster, (previous) => !(previous as RtlMarked).rtl);
        i++;
        continue;
      }
      // a right-to-left stretch: up to the last rtl letter before the next ltr letter
      let end = i;
      for (let j = i; j < clusters.length && clusters[j]!.direction !== "ltr"; j++) {
        if (clusters[j]!.direction === "rtl") end = j;
      }
      const pieces: Segment[] = [];
      let previousDigit = false;
      for (let j = i; j <= end; j++) {
        const piece = clusters[j]!;
        const digit = piece.direction === "digit";
        push(pieces, piece, () => digit === previousDigit);
        previousDigit = digit;
      }
      for (const piece of pieces.reverse()) out.push(Object.assign(piece, { rtl: true }));
      i = end + 1;
    }
    return out.map(({ face, text }) => ({ face, text }));
  }

  /** The glyphs of one face run, shaped, and their width in points at size 1 (advance widths, no kerning, as drawn). */
  #shaped(segment: Segment): { glyphs: readonly ShapedGlyph[]; width: number } {
    const cache = this.#glyphs[segment.face];
    let shaped = cache.get(segment.text);
    if (!shaped) {
      const face = this.#fonts[segment.face];
      const glyphs = shaperFor(face.font).shape(segment.text);
      shaped = cache.set(segment.text, { glyphs, width: advanceOf(glyphs) * face.scale });
    }
    return shaped;
  }

  glyphs(segment: Segment): readonly ShapedGlyph[] {
    return this.#shaped(segment).glyphs;
  }

  width(style: Style, text: string, size: number): number {
    let width = 0;
    for (const segment of this.segments(style, text)) width += this.#shaped(segment).width * size;
    return width;
  }

  /**
   * `text`, sanitized, broken into lines no wider than `maxWidth`: at spaces, and
   * inside tokens too long for a line (hashes, URLs, user agents, unspaced CJK),
   * preferably after a separator such as `/` `;` `,` `-` `.` or `:`. Always at least
   * one line. The result is shared: do not modify it.
   */
  lines(style: Style, text: string, size: number, maxWidth: number): readonly string[] {
    const cache = this.#lines[style];
    let wrappings = cache.get(text);
    const cached = wrappings?.find((wrapped) => wrapped.size === size && wrapped.maxWidth === maxWidth);
    if (cached) return cached.lines;
    if (!wrappings) cache.set(text, (wrappings = []));
    if (wrappings.length >= WRAPPINGS_PER_TEXT) wrappings.shift();
    const lines = this.#wrap(style, sanitize(text), size, maxWidth);
    wrappings.push({ size, maxWidth, lines });
    return lines;
  }

  #wrap(style: Style, text: string, size: number, maxWidth: number): string[] {
    const lines: string[] = [];
    const space = this.width(style, " ", size);
    let line = "";
    let lineWidth = 0;
    for (const word of text.split(" ")) {
      if (!word) continue;
      const wordWidth = this.width(style, word, size);
      if (line && lineWidth + space + wordWidth <= maxWidth) {
        line += ` ${word}`;
        lineWidth += space + wordWidth;
        continue;
      }
      if (line) lines.push(line);
      if (wordWidth <= maxWidth) {
        line = word;
        lineWidth = wordWidth;
        continue;
      }
      const pieces = this.#breakToken(style, word, size, maxWidth);
      line = pieces.pop()!;
      lineWidth = this.width(style, line, size);
      lines.push(...pieces);
    }
    if (line || lines.length === 0) lines.push(line);
    return lines;
  }

  #breakToken(style: Style, token: string, size: number, maxWidth: number): string[] {
    const pieces: string[] = [];
    const clusters = clusterTexts(token);
    let start = 0;
    while (start < clusters.length) {
      let end = start;
      let width = 0;
      let separatorEnd = -1;
      while (end < clusters.length) {
        const next = this.width(style, clusters[end]!, size);
        if (end > start && width + next > maxWidth) break;
        width += next;
        end++;
        if (/^[/;,&?=\-_.:)\]]$/.test(clusters[end - 1]!) && width >= maxWidth * 0.4) separatorEnd = end;
      }
      if (end < clusters.length && separatorEnd > start) end = separatorEnd;
      // shaping (Arabic joining forms) can make the piece wider than its clusters alone
      while (end - start > 1 && this.width(style, clusters.slice(start, end).join(""), size) > maxWidth) end--;
      pieces.push(clusters.slice(start, end).join(""));
      start = end;
    }
    return pieces;
  }
}

interface RtlMarked extends Segment {
  rtl?: boolean;
}
