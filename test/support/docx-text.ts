import { strFromU8, unzipSync, type Unzipped } from "fflate";

/**
 * What a `.docx` file really is, decided from its bytes alone (independently
 * of the service's own checks):
 * - `docx`: a readable ZIP with a main document part;
 * - `encrypted`: an OLE2 container holding EncryptionInfo/EncryptedPackage (password-protected OOXML);
 * - `ole2`: some other OLE2 container (e.g. a Word 97 .doc renamed);
 * - `odf`: a ZIP whose `mimetype` says OpenDocument;
 * - `malformed`: starts like a ZIP but is not readable as one, or has no main document part;
 * - `foreign`: neither ZIP nor OLE2.
 */
export type DocxClass =
  | { kind: "docx"; mainPart: string; parts: Unzipped }
  | { kind: "encrypted" | "ole2" | "odf" | "malformed" | "foreign"; reason: string };

const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const ZIP = Buffer.from("PK\x03\x04", "latin1");
const OFFICE_DOCUMENT_REL = /\/officeDocument$/;

export function classifyDocx(bytes: Buffer): DocxClass {
  if (startsWith(bytes, OLE2)) {
    // Directory entries of a compound file are UTF-16LE names.
    const encrypted = bytes.includes(Buffer.from("EncryptionInfo", "utf16le")) && bytes.includes(Buffer.from("EncryptedPackage", "utf16le"));
    return encrypted
      ? { kind: "encrypted", reason: "OLE2 container with EncryptionInfo and EncryptedPackage streams" }
      : { kind: "ole2", reason: "OLE2 container without encryption streams" };
  }
  if (!startsWith(bytes, ZIP)) return { kind: "foreign", reason: `starts with ${bytes.subarray(0, 4).toString("hex")}, neither ZIP nor OLE2` };
  let parts: Unzipped;
  try {
    parts = unzipSync(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    return { kind: "malformed", reason: `not a readable ZIP: ${(error as Error).message}` };
  }
  const mimetype = parts["mimetype"] ? strFromU8(parts["mimetype"]).trim() : "";
  if (mimetype.startsWith("application/vnd.oasis.opendocument.")) return { kind: "odf", reason: `ZIP with mimetype ${mimetype}` };
  const mainPart = mainPartName(parts);
  if (!parts[mainPart]) return { kind: "malformed", reason: `readable ZIP (${Object.keys(parts).length} entries) without ${mainPart}` };
  return { kind: "docx", mainPart, parts };
}

/** The target of the package's officeDocument relationship, else word/document.xml. */
function mainPartName(parts: Unzipped): string {
  const rels = parts["_rels/.rels"] ? strFromU8(parts["_rels/.rels"]) : "";
  for (const [relationship] of rels.matchAll(/<Relationship\b[^>]*>/g)) {
    const type = /\bType="([^"]*)"/.exec(relationship)?.[1] ?? "";
    const target = /\bTarget="([^"]*)"/.exec(relationship)?.[1];
    if (OFFICE_DOCUMENT_REL.test(type) && target) return target.replace(/^\/+/, "");
  }
  return "word/document.xml";
}

function startsWith(bytes: Buffer, magic: Buffer): boolean {
  return bytes.length >= magic.length && bytes.subarray(0, magic.length).equals(magic);
}

/** Elements after which a word boundary is inserted, as closing (`/name`) or empty (`name/`) tags. */
const BREAKS = new Set(["/w:p", "w:tab/", "w:br/", "w:cr/", "w:ptab/", "/w:tc"]);
const ON_OFF_FALSE = /\bw:val="(0|false|off)"/;

/**
 * Fields whose result the renderer computes afresh (the clock, the layout, the
 * file it was given): their result as cached in the DOCX is not what the PDF
 * shows, e.g. a DATE field saved as 4/24/2016 prints today's date.
 */
const VOLATILE_FIELD = /^\s*(DATE|TIME|PRINTDATE|PAGE|NUMPAGES|SECTIONPAGES|SECTION|PAGEREF|FILENAME|USERNAME|EDITTIME)\b/i;

/** Private-use characters around a note reference's number in docxBodyText(): neither letters nor digits. */
export const NOTE_START = "\uE000";
export const NOTE_END = "\uE001";

interface OpenField {
  instruction: string;
  /** Before `separate`, a field holds its instruction; after it, its displayed result. */
  showingResult: boolean;
  /** Ended by </w:fldSimple> rather than by fldChar end. */
  simple: boolean;
}

/**
 * The visible text of the main document part (body, tables, text boxes),
 * words separated as Word lays them out. Only `<w:t>` is read: deleted text
 * (`<w:delText>`) and field instructions (`<w:instrText>`) are other elements.
 * Skipped as well:
 * - runs hidden with `<w:vanish/>` in their own properties;
 * - `<mc:Fallback>` content, a second, legacy copy of a text box or drawing
 *   that `<mc:Choice>` already holds (reading both would count its words twice);
 * - the cached result of fields the renderer recomputes (VOLATILE_FIELD).
 * A footnote or endnote reference becomes NOTE_START, its number, NOTE_END:
 * not a word of the body, but the PDF may glue its mark to the adjacent word
 * ("Foo¹" → "Foo1"), which docxTokens() allows for.
 */
export function docxBodyText(xml: string): string {
  const out: string[] = [];
  // One entry per open <w:r>: whether that run is hidden.
  const runs: boolean[] = [];
  const fields: OpenField[] = [];
  const notes = { footnote: 0, endnote: 0 };
  let inRunProperties = false;
  let inParagraphProperties = false;
  let inText = false;
  let inInstruction = false;
  let fallbackDepth = 0;
  const shown = () =>
    fallbackDepth === 0 && !runs.at(-1) && fields.every((field) => field.showingResult && !VOLATILE_FIELD.test(field.instruction));
  for (const [, tag, text] of xml.matchAll(/<([^>]*)>|([^<]+)/g)) {
    if (text !== undefined) {
      if (inText && shown()) out.push(decodeEntities(text));
      else if (inInstruction && fields.length > 0) fields[fields.length - 1].instruction += decodeEntities(text);
      continue;
    }
    if (tag.startsWith("?") || tag.startsWith("!")) continue;
    const closing = tag.startsWith("/");
    const empty = tag.endsWith("/");
    const name = /^\/?([^\s/>]+)/.exec(tag)?.[1] ?? "";
    switch (name) {
      case "mc:Fallback":
        if (!empty) fallbackDepth += closing ? -1 : 1;
        continue;
      case "w:r":
        if (closing) runs.pop();
        else if (!empty) runs.push(false);
        continue;
      case "w:rPr":
        // Only a run's own properties; <w:pPr><w:rPr> formats the paragraph mark.
        inRunProperties = !closing && !empty && runs.length > 0 && !inParagraphProperties;
        continue;
      case "w:pPr":
        inParagraphProperties = !closing && !empty;
        continue;
      case "w:vanish":
        if (inRunProperties && runs.length > 0 && !ON_OFF_FALSE.test(tag)) runs[runs.length - 1] = true;
        continue;
      case "w:t":
        inText = !closing && !empty;
        continue;
      case "w:instrText":
        inInstruction = !closing && !empty;
        continue;
      case "w:fldChar": {
        if (fallbackDepth > 0) continue;
        const type = /w:fldCharType="(\w+)"/.exec(tag)?.[1];
        if (type === "begin") fields.push({ instruction: "", showingResult: false, simple: false });
        else if (type === "separate" && fields.length > 0) fields[fields.length - 1].showingResult = true;
        else if (type === "end" && fields.length > 0 && !fields[fields.length - 1].simple) fields.pop();
        continue;
      }
      case "w:fldSimple":
        if (fallbackDepth > 0 || empty) continue;
        if (closing) fields.pop();
        else fields.push({ instruction: decodeEntities(/w:instr="([^"]*)"/.exec(tag)?.[1] ?? ""), showingResult: true, simple: true });
        continue;
      case "w:footnoteReference":
      case "w:endnoteReference": {
        const kind = name === "w:footnoteReference" ? "footnote" : "endnote";
        // With customMarkFollows the mark is the text of the run itself.
        if (fallbackDepth === 0 && !/w:customMarkFollows="(1|true|on)"/.test(tag)) {
          notes[kind]++;
          if (shown()) out.push(`${NOTE_START}${notes[kind]}${NOTE_END}`);
        }
        continue;
      }
    }
    if (name === "w:noBreakHyphen" || name === "w:softHyphen") {
      if (shown()) out.push(name === "w:noBreakHyphen" ? "-" : "\u00ad");
      continue;
    }
    if (BREAKS.has(closing ? `/${name}` : empty ? `${name}/` : name) && fallbackDepth === 0) out.push(" ");
  }
  return out.join("");
}

const NAMED_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z][\w.-]*);/g, (whole, entity: string) => {
    if (entity.startsWith("#x")) return String.fromCodePoint(parseInt(entity.slice(2), 16));
    if (entity.startsWith("#")) return String.fromCodePoint(parseInt(entity.slice(1), 10));
    return NAMED_ENTITIES[entity] ?? whole; // an undeclared entity (see poi/ExternalEntityInText.docx) stays as written
  });
}

/** The body text of a classified-good DOCX. */
export function docxText(doc: Extract<DocxClass, { kind: "docx" }>): string {
  return docxBodyText(strFromU8(doc.parts[doc.mainPart]));
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;
const TOKEN = /[\p{L}\p{N}]+/gu;

/** Tokens, for each the text between it and the token before it, and other spellings it may have in a PDF. */
export interface TokenStream {
  tokens: string[];
  gaps: string[];
  /** alternates[i]: spellings of tokens[i] with a note mark glued on (DOCX side only). */
  alternates?: string[][];
}

/**
 * NFKC, lower case, soft hyphens dropped, the bidi controls pdftotext puts
 * around each run of one direction made spaces, and a hyphen between two letters or
 * digits removed ("Ростова-на-Дону" → "ростованадону"): pdftotext itself joins
 * a compound broken after its hyphen at a line end ("Ростова-на-\nДону" →
 * "Ростова-наДону"), so compounds are compared whole on both sides.
 * Then every CJK, Kana or Hangul character is a token of its own.
 */
function prepare(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\u00ad/g, "")
    .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, " ")
    .replace(/(?<=[\p{L}\p{N}])[-\u2010](?=[\p{L}\p{N}])/gu, "")
    .replace(CJK, (c) => ` ${c} `);
}

/** Tokens of extracted text: runs of letters and digits (see prepare()). */
export function tokenizeWithGaps(text: string): TokenStream {
  const prepared = prepare(text);
  const stream: TokenStream = { tokens: [], gaps: [] };
  let end = 0;
  for (const match of prepared.matchAll(TOKEN)) {
    stream.tokens.push(match[0]);
    stream.gaps.push(prepared.slice(end, match.index));
    end = match.index + match[0].length;
  }
  return stream;
}

export function tokenize(text: string): string[] {
  return tokenizeWithGaps(text).tokens;
}

/**
 * Tokens of docxBodyText() output. Note references are no tokens; a token
 * touching one also may appear with the note's mark glued to it, as decimal,
 * roman or letter number (Word's endnotes count i, ii, iii by default).
 */
export function docxTokens(text: string): TokenStream {
  const prepared = prepare(text);
  const notes: Array<{ at: number; number: number }> = [];
  let plain = "";
  let last = 0;
  for (const match of prepared.matchAll(new RegExp(`${NOTE_START}(\\d+)${NOTE_END}`, "g"))) {
    plain += prepared.slice(last, match.index);
    notes.push({ at: plain.length, number: Number(match[1]) });
    last = match.index + match[0].length;
  }
  plain += prepared.slice(last);
  const stream: Required<TokenStream> = { tokens: [], gaps: [], alternates: [] };
  let end = 0;
  for (const match of plain.matchAll(TOKEN)) {
    const [token, start] = [match[0], match.index];
    const alternates: string[] = [];
    for (const note of notes) {
      if (note.at === start + token.length) alternates.push(...noteMarks(note.number).map((mark) => token + mark));
      if (note.at === start) alternates.push(...noteMarks(note.number).map((mark) => mark + token));
    }
    stream.tokens.push(token);
    stream.gaps.push(plain.slice(end, start));
    stream.alternates.push(alternates);
    end = start + token.length;
  }
  return stream;
}

function noteMarks(n: number): string[] {
  const roman: Array<[number, string]> = [[1000, "m"], [900, "cm"], [500, "d"], [400, "cd"], [100, "c"], [90, "xc"], [50, "l"], [40, "xl"], [10, "x"], [9, "ix"], [5, "v"], [4, "iv"], [1, "i"]];
  let romanMark = "";
  for (let rest = n, i = 0; rest > 0; ) {
    if (rest >= roman[i][0]) {
      romanMark += roman[i][1];
      rest -= roman[i][0];
    } else i++;
  }
  const letter = String.fromCharCode(97 + ((n - 1) % 26)).repeat(Math.floor((n - 1) / 26) + 1);
  return [String(n), romanMark, letter];
}

export interface Recall {
  /** DOCX tokens found in the PDF (each PDF token matches once). */
  found: number;
  total: number;
  /** found / total; 1 when the DOCX has no tokens. */
  recall: number;
  /** Of the found tokens, how many only as pieces of a word the PDF broke across lines. */
  rejoined: number;
  /** Up to `limit` DOCX tokens that had no match, in document order. */
  missing: string[];
}

/** What may separate the pieces of one word in extracted PDF text: a line break or space, at most one hyphen. */
const WORD_BREAK = /^\s*[-\u2010]?\s*$/u;

/**
 * Share of the DOCX tokens found in the PDF's tokens, each PDF token matching
 * at most once: an equal token, or for a word touching a note reference, the
 * word with the note's mark glued on. A DOCX token still unmatched is also found when
 * consecutive unmatched PDF tokens, separated only by a line break, a space or
 * a hyphen, spell it: a word LibreOffice broke across lines (hyphenation, a
 * word wider than its table cell or line) or pdftotext split at wide spacing.
 */
export function recall(docx: TokenStream, pdf: TokenStream, limit = 20): Recall {
  const used = new Array<boolean>(pdf.tokens.length).fill(false);
  const positions = new Map<string, number[]>();
  pdf.tokens.forEach((token, i) => {
    const list = positions.get(token);
    if (list) list.push(i);
    else positions.set(token, [i]);
  });
  const take = (token: string) => {
    const position = positions.get(token)?.pop();
    if (position !== undefined) used[position] = true;
    return position !== undefined;
  };
  let found = 0;
  const unmatched: number[] = [];
  docx.tokens.forEach((token, i) => {
    // A word touching a note reference: its glued spelling first, which no other word can claim.
    if ((docx.alternates?.[i] ?? []).some(take) || take(token)) found++;
    else unmatched.push(i);
  });
  let rejoined = 0;
  const missing: string[] = [];
  for (const i of unmatched) {
    if (rejoin(docx.tokens[i], pdf, used)) {
      found++;
      rejoined++;
    } else if (missing.length < limit) {
      missing.push(docx.tokens[i]);
    }
  }
  const total = docx.tokens.length;
  return { found, total, recall: total === 0 ? 1 : found / total, rejoined, missing };
}

/** Finds `token` as 2+ consecutive unused PDF tokens joined at word breaks; marks them used. */
function rejoin(token: string, pdf: TokenStream, used: boolean[]): boolean {
  const { tokens, gaps } = pdf;
  for (let i = 0; i < tokens.length; i++) {
    if (used[i] || tokens[i].length >= token.length || !token.startsWith(tokens[i])) continue;
    let spelled = tokens[i];
    let j = i;
    while (spelled.length < token.length && j + 1 < tokens.length && !used[j + 1] && WORD_BREAK.test(gaps[j + 1])) {
      j++;
      spelled += tokens[j];
      if (!token.startsWith(spelled)) break;
    }
    if (spelled === token) {
      for (let k = i; k <= j; k++) used[k] = true;
      return true;
    }
  }
  return false;
}

/** The text of a DOCX file's main document and notes; throws unless the bytes are a readable DOCX. */
export function docxFileText(bytes: Buffer): string {
  const doc = classifyDocx(bytes);
  if (doc.kind !== "docx") throw new Error(`not a readable DOCX: ${doc.reason}`);
  return docxText(doc);
}
