// Unicode fonts for the audit-trail certificate page: found once per process (known
// Debian paths, then fontconfig), parsed once per process with fontkit, and embedded
// per document as subsets (document-fonts.ts). DejaVu Sans (fonts-dejavu-core) covers
// Latin, Cyrillic, Greek, Arabic and Hebrew; Droid Sans Fallback (fonts-droid-fallback)
// covers CJK.
import { execFile } from "node:child_process";
import { access, readFile } from "node:fs/promises";
import { basename } from "node:path";
import { promisify } from "node:util";
import fontkit from "@pdf-lib/fontkit";

type FontkitFont = ReturnType<typeof fontkit.create>;

export type FaceName = "regular" | "bold" | "cjk";

interface FaceSpec {
  /** The fontconfig pattern, and the file name fontconfig must answer with. */
  pattern: string;
  file: string;
  /** Where Debian installs the file. */
  paths: string[];
  debianPackage: string;
  /** Characters whose glyphs form the face's subset shared by all documents (document-fonts.ts). */
  baseChars: string;
}

const charRange = (first: number, last: number) =>
  String.fromCharCode(...Array.from({ length: last - first + 1 }, (_, i) => first + i));
/**
 * ASCII, Latin-1 (without the soft hyphen) and the punctuation the page and common
 * names use: nearly every certificate page of Latin-script text needs nothing else.
 */
const LATIN_BASE_CHARS = `${charRange(0x20, 0x7e)}${charRange(0xa0, 0xac)}${charRange(0xae, 0xff)}‘’‚“”„–—…·•′″‹›€™†‡‰\uFFFD`;
/** Bold is only used for the page's own headings. */
const ASCII = charRange(0x20, 0x7e);

const FACES: Record<FaceName, FaceSpec> = {
  regular: {
    pattern: "DejaVu Sans:style=Book",
    file: "DejaVuSans.ttf",
    paths: ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"],
    debianPackage: "fonts-dejavu-core",
    baseChars: LATIN_BASE_CHARS,
  },
  bold: {
    pattern: "DejaVu Sans:style=Bold",
    file: "DejaVuSans-Bold.ttf",
    paths: ["/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"],
    debianPackage: "fonts-dejavu-core",
    baseChars: ASCII,
  },
  cjk: {
    pattern: "Droid Sans Fallback",
    file: "DroidSansFallbackFull.ttf",
    paths: [
      "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
      "/usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf",
    ],
    debianPackage: "fonts-droid-fallback",
    // only drawn for what DejaVu Sans lacks: a fixed set of its glyphs would go unused
    baseChars: "",
  },
};

/** Faces tried in order for each character of a text in that style. */
export const STYLE_CHAINS = {
  regular: ["regular", "cjk"],
  bold: ["bold", "cjk"],
} as const satisfies Record<string, readonly FaceName[]>;
export type Style = keyof typeof STYLE_CHAINS;

export interface LoadedFace {
  name: FaceName;
  path: string;
  font: FontkitFont;
  /** Points per font unit at size 1. */
  scale: number;
  /** See FaceSpec. */
  baseChars: string;
}

export type FontSet = Record<FaceName, LoadedFace>;

export class CertificateFontError extends Error {
  override name = "CertificateFontError";
}

const execFileAsync = promisify(execFile);

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function locate(name: FaceName): Promise<string> {
  const spec = FACES[name];
  for (const path of spec.paths) if (await exists(path)) return path;
  // fontconfig answers with its best substitute when the font is missing: accept only the right file
  try {
    const { stdout } = await execFileAsync("fc-match", ["-f", "%{file}", spec.pattern], { timeout: 5000 });
    const path = stdout.trim();
    if (path && basename(path) === spec.file && (await exists(path))) return path;
  } catch {
    // no fontconfig: fall through to the error naming the package
  }
  throw new CertificateFontError(
    `certificate page font ${spec.file} ("${spec.pattern}") not found in ${spec.paths.join(", ")} nor by fontconfig; ` +
      `install the Debian package ${spec.debianPackage} (scripts/install/runtime.sh does)`,
  );
}

async function loadFace(name: FaceName): Promise<LoadedFace> {
  const path = await locate(name);
  const bytes = new Uint8Array(await readFile(path));
  let font: FontkitFont;
  try {
    font = fontkit.create(bytes);
  } catch (error) {
    throw new CertificateFontError(`certificate page font ${path} cannot be read: ${(error as Error).message}`);
  }
  if (!("layout" in font) || typeof font.unitsPerEm !== "number") {
    throw new CertificateFontError(`certificate page font ${path} is a collection, expected a single font`);
  }
  padSubsetGlyphs(font);
  return { name, path, font, scale: 1 / font.unitsPerEm, baseChars: FACES[name].baseChars };
}

interface TtfSubsetInternals {
  glyf?: Uint8Array[];
  offset?: number;
  _addGlyph?: (gid: number) => number;
}

/**
 * @pdf-lib/fontkit 1.1.1 writes a subset's `loca` in the short format (offsets / 2)
 * whenever the subset is small, but copies glyph data unpadded: after a glyph of odd
 * length every later offset is off by one and the glyphs render blank. Debian's
 * DroidSansFallbackFull.ttf has odd-length glyphs (DejaVu happens to pad its own).
 * So each glyph added to a subset of this font is padded to an even length, which
 * the TrueType spec recommends anyway.
 */
function padSubsetGlyphs(font: FontkitFont): void {
  const createSubset = font.createSubset.bind(font);
  font.createSubset = () => {
    const subset = createSubset();
    const internals = subset as unknown as TtfSubsetInternals;
    const addGlyph = internals._addGlyph;
    if (typeof addGlyph !== "function") return subset; // a CFF subset: no loca
    internals._addGlyph = function (this: TtfSubsetInternals, gid: number) {
      const index = addGlyph.call(this, gid);
      const glyf = this.glyf;
      const data = glyf?.[index];
      if (glyf && data && data.length % 2 === 1 && index === glyf.length - 1 && typeof this.offset === "number") {
        const Bytes = data.constructor as { alloc?: (size: number) => Uint8Array };
        const padded = Bytes.alloc ? Bytes.alloc(data.length + 1) : new Uint8Array(data.length + 1);
        padded.set(data, 0);
        glyf[index] = padded;
        this.offset += 1;
      }
      return index;
    };
    return subset;
  };
}

let fontSet: Promise<FontSet> | undefined;

/** Loads every face once per process; a failure is not cached, so installing the package later helps. */
export function loadFonts(): Promise<FontSet> {
  fontSet ??= (async () => {
    const [regular, bold, cjk] = await Promise.all([loadFace("regular"), loadFace("bold"), loadFace("cjk")]);
    return { regular, bold, cjk };
  })();
  fontSet.catch(() => (fontSet = undefined));
  return fontSet;
}
