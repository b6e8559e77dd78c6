import { ServiceError } from "../core/errors.js";

/**
 * How deep the Markdown and HTML sources of a conversion may nest, checked by
 * one pass over the text before marked or sanitize-html reads it (on the
 * sanitizer thread). Both cost far more than their size when nesting runs
 * deep: marked lexes every level of a block quote or list by recursion (deep
 * enough, its stack overflows; before that, its time grows far faster than the
 * depth), and sanitize-html slows down on deeply nested elements, while a few
 * hundred levels cost it no more than flat markup. Real documents stay far
 * below either limit. The figures: bench/README.md, "Markdown and HTML nesting".
 */
export const MAX_MARKDOWN_NESTING = 100;
/** Above twice {@link MAX_MARKDOWN_NESTING}: a Markdown list level becomes two HTML elements (`ul`, `li`). */
export const MAX_HTML_NESTING = 256;

/** Throws UNPROCESSABLE_DOCUMENT when `markdown`'s block quotes and list items nest deeper than {@link MAX_MARKDOWN_NESTING}. */
export function checkMarkdownNesting(markdown: string): void {
  if (markdownNestingDepth(markdown, MAX_MARKDOWN_NESTING) > MAX_MARKDOWN_NESTING) throw tooDeep("Markdown", "block quotes and lists", MAX_MARKDOWN_NESTING);
}

/** Throws UNPROCESSABLE_DOCUMENT when `html`'s elements nest deeper than {@link MAX_HTML_NESTING}. */
export function checkHtmlNesting(html: string): void {
  if (htmlNestingDepth(html, MAX_HTML_NESTING) > MAX_HTML_NESTING) throw tooDeep("HTML", "elements", MAX_HTML_NESTING);
}

function tooDeep(language: string, what: string, limit: number): ServiceError {
  return new ServiceError("UNPROCESSABLE_DOCUMENT", `The ${language} nests ${what} more than ${limit} levels deep; at most ${limit} levels are accepted.`);
}

// ---------------------------------------------------------------------------
// Markdown

/**
 * The deepest nesting of block quotes and list items in `markdown`, as
 * CommonMark nests them: markers at the start of a line (`>`, `-`, `+`, `*`,
 * `1.`, `1)`), one level each, and the list items left open above the line
 * that its indentation keeps it inside. Scanning stops once the depth passes
 * `stopAbove`. An estimate where it does not matter (a rule of spaced
 * markers counts as nested items; lazy continuation lines close items).
 */
export function markdownNestingDepth(markdown: string, stopAbove = Infinity): number {
  /** Content columns of the list items open outside block quotes, outermost first. */
  const items: number[] = [];
  let deepest = 0;
  for (let start = 0; start <= markdown.length && deepest <= stopAbove; ) {
    const newline = markdown.indexOf("\n", start);
    const end = newline < 0 ? markdown.length : newline;
    deepest = Math.max(deepest, lineDepth(markdown, start, end, items, stopAbove));
    start = end + 1;
  }
  return deepest;
}

function lineDepth(text: string, start: number, end: number, items: number[], stopAbove: number): number {
  let [at, column] = skipBlanks(text, start, end, 0);
  if (at === end) return 0; // a blank line leaves the items open
  while (items.length > 0 && column < items.at(-1)!) items.pop();
  let depth = items.length;
  let quoted = false;
  while (depth <= stopAbove) {
    if (text[at] === ">") {
      quoted = true;
      [at, column] = skipBlanks(text, at + 1, end, column + 1);
    } else {
      const marker = listMarkerLength(text, at, end);
      if (marker === 0) break;
      const contentAt = skipBlanks(text, at + marker, end, column + marker);
      // the content starts after 1–4 blanks; with more (or none), one column after the marker
      const contentColumn = contentAt[1] - column - marker > 4 || contentAt[0] === end ? column + marker + 1 : contentAt[1];
      if (!quoted) items.push(contentColumn);
      [at, column] = contentAt;
    }
    depth++;
  }
  return depth;
}

/** Past spaces and tabs (to the next multiple of 4), and a carriage return at the end of the line. */
function skipBlanks(text: string, at: number, end: number, column: number): [number, number] {
  for (; at < end; at++) {
    const c = text[at];
    if (c === " ") column++;
    else if (c === "\t") column += 4 - (column % 4);
    else if (c !== "\r") break;
  }
  return [at, column];
}

/** The length of the list marker at `at` (`-`, `+`, `*`, or 1–9 digits and `.` or `)`, then a blank or the line's end); 0 without one. */
function listMarkerLength(text: string, at: number, end: number): number {
  let length = 0;
  if ("-+*".includes(text[at]!)) length = 1;
  else {
    while (length < 9 && at + length < end && text[at + length]! >= "0" && text[at + length]! <= "9") length++;
    if (length === 0 || (text[at + length] !== "." && text[at + length] !== ")")) return 0;
    length++;
  }
  const next = text[at + length];
  return at + length >= end || next === " " || next === "\t" || next === "\r" ? length : 0;
}

// ---------------------------------------------------------------------------
// HTML

/** Elements without content (htmlparser2's list, which sanitize-html parses with). */
const VOID = new Set(["area", "base", "basefont", "br", "col", "command", "embed", "frame", "hr", "img", "input", "isindex", "keygen", "link", "meta", "param", "source", "track", "wbr"]);
/** Elements whose content is text up to their end tag; `plaintext` has no end. */
const RAW_TEXT = new Set(["script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes"]);
/** Inside these, `<x/>` closes itself. */
const FOREIGN = new Set(["svg", "math"]);

const closing = (...names: string[]) => new Set(names);
const P = closing("p");
const HEADINGS = closing("h1", "h2", "h3", "h4", "h5", "h6", "p");
const FORM_CONTROLS = closing("input", "option", "optgroup", "select", "button", "datalist", "textarea");
/** The open elements an opening tag closes while they are the innermost one, as htmlparser2 does (its openImpliesClose). */
const IMPLIED_CLOSES = new Map<string, Set<string>>([
  ["tr", closing("tr", "th", "td")],
  ["th", closing("th")],
  ["td", closing("thead", "th", "td")],
  ["body", closing("head", "link", "script")],
  ["a", closing("a")],
  ["li", closing("li")],
  ["option", closing("option")],
  ["optgroup", closing("optgroup", "option")],
  ["dd", closing("dd", "dt")],
  ["dt", closing("dd", "dt")],
  ["rt", closing("rt", "rp")],
  ["rp", closing("rt", "rp")],
  ["tbody", closing("thead", "tbody")],
  ["tfoot", closing("thead", "tbody")],
  ...["h1", "h2", "h3", "h4", "h5", "h6"].map((name) => [name, HEADINGS] as const),
  ...["select", "input", "output", "button", "datalist", "textarea"].map((name) => [name, FORM_CONTROLS] as const),
  ...[
    "p", "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset", "figcaption", "figure", "footer",
    "form", "header", "hr", "main", "nav", "ol", "pre", "section", "table", "ul",
  ].map((name) => [name, P] as const),
]);

const TAG_NAME = /<(\/?)([a-zA-Z][^\s/>]*)/y;

/**
 * The deepest nesting of elements in `html`, close to how htmlparser2
 * (sanitize-html's parser) nests them: void elements, implied end tags, raw
 * text elements, self-closing tags inside SVG and MathML, end tags that close
 * what they skip. Comments and declarations are passed over. Scanning stops
 * once the depth passes `stopAbove`.
 */
export function htmlNestingDepth(html: string, stopAbove = Infinity): number {
  const open: string[] = [];
  let foreign = 0;
  let deepest = 0;
  const popTo = (length: number) => {
    while (open.length > length) if (FOREIGN.has(open.pop()!)) foreign--;
  };
  for (let at = html.indexOf("<"); at >= 0 && deepest <= stopAbove; at = html.indexOf("<", at)) {
    if (html.startsWith("<!--", at)) {
      const end = html.indexOf("-->", at + 4);
      if (end < 0) break;
      at = end + 3;
      continue;
    }
    TAG_NAME.lastIndex = at;
    const tag = TAG_NAME.exec(html);
    const end = tag ? tagEnd(html, at + tag[0].length) : at;
    if (!tag || end < 0) {
      at = end < 0 ? html.length : at + 1;
      continue;
    }
    at = end + 1;
    const name = tag[2]!.toLowerCase();
    if (tag[1]) {
      const index = open.lastIndexOf(name);
      if (index >= 0) popTo(index);
      continue;
    }
    const closes = IMPLIED_CLOSES.get(name);
    while (closes && open.length > 0 && closes.has(open.at(-1)!)) popTo(open.length - 1);
    if (VOID.has(name) || (foreign > 0 && html[end - 1] === "/")) continue;
    if (name === "plaintext") return Math.max(deepest, open.length + 1);
    open.push(name);
    if (FOREIGN.has(name)) foreign++;
    deepest = Math.max(deepest, open.length);
    if (RAW_TEXT.has(name) && foreign === 0) {
      const close = new RegExp(`</${name}`, "ig");
      close.lastIndex = at;
      const match = close.exec(html);
      if (!match) break;
      at = match.index;
    }
  }
  return deepest;
}

/** The `>` ending the tag whose attributes start at `at`, past quoted attribute values; -1 when the tag does not end. */
function tagEnd(html: string, at: number): number {
  let quote = "";
  let value = false;
  for (; at < html.length; at++) {
    const c = html[at]!;
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === ">") return at;
    else if (value && (c === '"' || c === "'")) quote = c;
    else if (c === "=") value = true;
    else if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") value = false;
  }
  return -1;
}
