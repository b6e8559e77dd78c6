// Glyph runs for the certificate page: the glyphs fontkit's layout gives for a text
// (after GSUB substitution: ligatures, Arabic joining forms), each with its advance
// width and the code points it stands for. That is what is drawn: positioning (GPOS,
// kerning) is not used, as pdf-lib never used it either.
//
// fontkit's layout is costly per string (bench/README.md, "Certificate page"), and most
// strings on a certificate page are new per document (hashes, times, names). So Latin, Greek and Cyrillic text is
// mapped through the cmap directly when layout provably changes nothing: fontkit
// shapes these scripts with its default shaper (the features in DEFAULT_FEATURES, no
// reordering), so a text whose every glyph is outside the coverage of all lookups of
// those features (also those nested in contextual lookups), is no mark or ligature
// glyph a lookup could skip over, and contains no ligature's component sequence comes
// out of layout exactly as its cmap glyphs.
import type fontkit from "@pdf-lib/fontkit";

type FontkitFont = ReturnType<typeof fontkit.create>;

export interface ShapedGlyph {
  id: number;
  /** Advance width in font units. */
  advance: number;
  codePoints: readonly number[];
}

/** The GSUB features fontkit's default shaper applies unasked (fontkit 1.x DefaultShaper). */
const DEFAULT_FEATURES = new Set(["rvrn", "ltra", "ltrm", "frac", "numr", "dnom", "ccmp", "locl", "rlig", "calt", "clig", "liga", "rclt"]);

/**
 * Characters fontkit shapes with its default shaper, left to right: Latin, Greek and
 * Cyrillic letters and the punctuation, symbols and digits around them. Not U+2044
 * (fraction slash: fontkit shapes the digits around it), not marks, not the default
 * ignorable characters fontkit replaces with a blank space glyph.
 */
const DIRECT_CHAR = /^(?![\u2044\p{M}\p{Default_Ignorable_Code_Point}])[\u0020-\u007E\u00A0-\u052F\u1E00-\u1FFF\u2010-\u205F\u20A0-\u20CF\u2100-\u214F]$/u;

const GDEF_LIGATURE = 2;
const GDEF_MARK = 3;

/** Decoded fontkit (restructure) tables: arrays, lazy arrays and plain records. */
type Table = any;

function list(value: Table): Table[] {
  if (value == null) return [];
  return typeof value.toArray === "function" ? value.toArray() : Array.from(value);
}

function coverageGlyphs(coverage: Table): number[] {
  if (coverage.version === 1) return list(coverage.glyphs);
  const glyphs: number[] = [];
  for (const { start, end } of list(coverage.rangeRecords)) for (let glyph = start; glyph <= end; glyph++) glyphs.push(glyph);
  return glyphs;
}

function classOf(classDef: Table, glyph: number): number {
  if (!classDef) return 0;
  if (classDef.version === 1) return classDef.classValueArray[glyph - classDef.startGlyph] ?? 0;
  return list(classDef.classRangeRecord).find((range) => range.start <= glyph && glyph <= range.end)?.class ?? 0;
}

/** The lookups a (chaining) contextual subtable applies, in any of its formats. */
function nestedLookups(table: Table): number[] {
  const rules = [table, ...[table.ruleSets, table.classSet, table.chainRuleSets, table.chainClassSet].flatMap((sets) => list(sets).flatMap(list))];
  return rules.flatMap((rule) => list(rule?.lookupRecords).map((record) => record.lookupListIndex as number));
}

export interface Ligature {
  components: number[];
  glyph: number;
}

interface Substitutions {
  /** Glyphs a single, multiple, alternate or reverse-chaining substitution may replace. */
  replaceable: Set<number>;
  /** First glyph → the remaining component sequences of the ligatures starting with it. */
  ligatures: Map<number, number[][]>;
  /** Every ligature: its component glyphs and the glyph they become. */
  ligatureResults: Ligature[];
}

function substitutions(font: Table): Substitutions {
  const result: Substitutions = { replaceable: new Set(), ligatures: new Map(), ligatureResults: [] };
  const gsub = font.GSUB;
  if (!gsub) return result;
  const lookups = list(gsub.lookupList);
  const pending: number[] = list(gsub.featureList)
    .filter((record) => DEFAULT_FEATURES.has(record.tag))
    .flatMap((record) => list(record.feature.lookupListIndexes));
  const seen = new Set<number>();
  while (pending.length > 0) {
    const index = pending.pop()!;
    if (seen.has(index) || !lookups[index]) continue;
    seen.add(index);
    const lookup = lookups[index];
    for (const subtable of list(lookup.subTables)) {
      const type: number = lookup.lookupType === 7 ? subtable.lookupType : lookup.lookupType;
      const table = lookup.lookupType === 7 ? subtable.extension : subtable;
      if (type === 5 || type === 6) {
        pending.push(...nestedLookups(table));
      } else if (type === 4) {
        // components separated by skipped base glyphs cannot be found as a sequence
        const skipsBases = Boolean(lookup.flags?.ignoreBaseGlyphs);
        coverageGlyphs(table.coverage).forEach((first, i) => {
          for (const ligature of list(table.ligatureSets.get(i))) {
            const rest: number[] = list(ligature.components);
            if (skipsBases) [first, ...rest].forEach((glyph) => result.replaceable.add(glyph));
            else result.ligatures.set(first, [...(result.ligatures.get(first) ?? []), rest]);
            result.ligatureResults.push({ components: [first, ...rest], glyph: ligature.glyph });
          }
        });
      } else {
        for (const glyph of coverageGlyphs(table.coverage)) result.replaceable.add(glyph);
      }
    }
  }
  return result;
}

/** The advance of `glyphs`, in font units. */
export function advanceOf(glyphs: readonly ShapedGlyph[]): number {
  let units = 0;
  for (const glyph of glyphs) units += glyph.advance;
  return units;
}

const shapers = new WeakMap<FontkitFont, Shaper>();

/** The shaper of a font, made once per process (reading its GSUB takes a few milliseconds). */
export function shaperFor(font: FontkitFont): Shaper {
  let shaper = shapers.get(font);
  if (!shaper) shapers.set(font, (shaper = new Shaper(font)));
  return shaper;
}

export class Shaper {
  readonly #font: FontkitFont;
  readonly #substitutions: Substitutions;
  readonly #direct = new Map<number, ShapedGlyph | null>();

  constructor(font: FontkitFont) {
    this.#font = font;
    this.#substitutions = substitutions(font);
  }

  /** The glyphs of `text` in drawing order, as fontkit lays them out. */
  shape(text: string): ShapedGlyph[] {
    const glyphs: ShapedGlyph[] = [];
    for (let i = 0; i < text.length; i++) {
      const glyph = this.#directGlyph(text.charCodeAt(i));
      if (!glyph) return this.#layout(text);
      glyphs.push(glyph);
    }
    return this.#formsLigature(glyphs) ? this.#layout(text) : glyphs;
  }

  /** The ligatures whose components are all among `glyphs`. */
  ligaturesOf(glyphs: ReadonlySet<number>): Ligature[] {
    return this.#substitutions.ligatureResults.filter(({ components }) => components.every((glyph) => glyphs.has(glyph)));
  }

  #layout(text: string): ShapedGlyph[] {
    return this.#font.layout(text).glyphs.map((glyph) => ({ id: glyph.id, advance: glyph.advanceWidth, codePoints: glyph.codePoints }));
  }

  /** The cmap glyph of a UTF-16 unit no default feature can change, else null. */
  #directGlyph(unit: number): ShapedGlyph | null {
    let glyph = this.#direct.get(unit);
    if (glyph === undefined) {
      glyph = null;
      const char = String.fromCharCode(unit);
      if (DIRECT_CHAR.test(char)) {
        const { id, advanceWidth } = this.#font.glyphForCodePoint(unit);
        const gdefClass = classOf((this.#font as Table).GDEF?.glyphClassDef, id);
        if (!this.#substitutions.replaceable.has(id) && gdefClass !== GDEF_MARK && gdefClass !== GDEF_LIGATURE) {
          glyph = { id, advance: advanceWidth, codePoints: [unit] };
        }
      }
      this.#direct.set(unit, glyph);
    }
    return glyph;
  }

  #formsLigature(glyphs: ShapedGlyph[]): boolean {
    const { ligatures } = this.#substitutions;
    if (ligatures.size === 0) return false;
    return glyphs.some((glyph, i) =>
      ligatures.get(glyph.id)?.some((rest) => rest.every((component, j) => glyphs[i + 1 + j]?.id === component)),
    );
  }
}
