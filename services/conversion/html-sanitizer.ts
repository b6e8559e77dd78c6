import postcss, { type Root } from "postcss";
import sanitizeHtml, { type IOptions } from "sanitize-html";
import { checkHtmlNesting } from "./nesting-limits.js";

/**
 * HTML as LibreOffice's HTML import may read it: nothing in it points outside
 * the document. LibreOffice 7.4 fetches what an HTML page references while
 * converting it (images, `<link>` stylesheets, `background` attributes, pages
 * named by `<meta http-equiv=refresh>`, over HTTP and from files of the
 * converting machine alike: test/integration/convert-external-resources.test.ts),
 * so a client's document could make the server read internal addresses and
 * local files. What is kept is an allowlist, sanitize-html's: text, headings,
 * paragraphs, lists, tables, inline formatting, links (http, https, mailto or
 * within the page: never fetched), the title, `<style>` and `style` with every
 * `url()`, `@import` and `@font-face` removed, and images whose `src` is a
 * `data:` PNG, JPEG, GIF, BMP or WebP. Everything else (script, iframe, frame,
 * object, embed, applet, link, base, meta, form controls, audio, video, SVG,
 * `srcset`, `background`, other images, event handlers) is dropped, the text
 * of an unknown element kept. Elements nested deeper than MAX_HTML_NESTING
 * are refused (422) before sanitize-html reads them.
 */
export function sanitizeHtmlDocument(html: Buffer): Buffer {
  const text = decodeHtml(html);
  checkHtmlNesting(text);
  const clean = sanitizeHtml(text, OPTIONS);
  // Every text and attribute value of sanitize-html's output is escaped, so a
  // literal "<title>" or "<style>" in it is one of the elements it kept; the
  // content of <style> is passed through raw and needs cleaning here.
  const head: string[] = [];
  const body = clean
    .replace(/<title>([\s\S]*?)<\/title>/g, (_, title: string) => {
      if (!head.some((h) => h.startsWith("<title>"))) head.push(`<title>${title}</title>`);
      return "";
    })
    .replace(/<style>([\s\S]*?)<\/style>/g, (_, css: string) => {
      const safe = safeStylesheet(css);
      if (safe) head.push(`<style>${safe}</style>`);
      return "";
    });
  return Buffer.from(`<!DOCTYPE html>\n<html><head><meta charset="utf-8">${head.join("")}</head><body>\n${body}\n</body></html>\n`);
}

const IMAGE_DATA_URL = /^data:image\/(?:png|jpeg|jpg|gif|bmp|webp)[;,]/i;
const LINK_TARGET = /^(?:https?:|mailto:|#)/i;

const TEXT_TAGS = [
  "h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "span", "br", "hr", "pre", "blockquote", "address", "center",
  "article", "aside", "section", "header", "footer", "main", "nav", "figure", "figcaption", "details", "summary",
  "ul", "ol", "li", "dl", "dt", "dd",
  "table", "caption", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "th", "td",
  "a", "b", "strong", "i", "em", "u", "s", "strike", "del", "ins", "sub", "sup", "small", "big", "tt", "code", "kbd",
  "samp", "var", "cite", "q", "abbr", "dfn", "mark", "font", "bdi", "bdo", "wbr", "ruby", "rt", "rp",
];

const OPTIONS: IOptions = {
  allowedTags: [...TEXT_TAGS, "img", "title", "style"],
  allowVulnerableTags: true, // <style>: its content is cleaned by safeStylesheet
  disallowedTagsMode: "discard",
  // dropped with their content (other unknown elements lose only their tags)
  nonTextTags: ["script", "style", "textarea", "option", "noscript", "template", "noframes", "iframe", "audio", "video", "svg", "math"],
  allowedAttributes: {
    "*": ["style", "class", "id", "lang", "dir", "title", "align", "valign", "width", "height", "bgcolor", "color"],
    a: ["href", "name"],
    img: ["src", "alt", "border", "hspace", "vspace"],
    table: ["border", "cellpadding", "cellspacing", "frame", "rules", "summary"],
    td: ["colspan", "rowspan", "nowrap"],
    th: ["colspan", "rowspan", "nowrap", "scope"],
    col: ["span"],
    colgroup: ["span"],
    ol: ["start", "type", "reversed"],
    ul: ["type"],
    li: ["value", "type"],
    font: ["face", "size"],
  },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesByTag: { img: ["data"] },
  allowedSchemesAppliedToAttributes: ["href", "src", "cite"],
  allowProtocolRelative: false,
  parseStyleAttributes: false, // cleaned below, by the same rules as <style>
  transformTags: {
    "*": (tagName, attribs) => {
      const kept = { ...attribs };
      if (kept.style !== undefined) kept.style = safeDeclarations(kept.style);
      if (!kept.style) delete kept.style;
      if (tagName === "img" && !IMAGE_DATA_URL.test(kept.src?.trim() ?? "")) delete kept.src;
      if (tagName === "a" && kept.href !== undefined && !LINK_TARGET.test(kept.href.trim())) delete kept.href;
      return { tagName, attribs: kept };
    },
  },
  // an image left without a source would be an empty frame
  exclusiveFilter: (frame) => frame.tag === "img" && !frame.attribs.src,
};

/**
 * The HTML's text: a byte order mark or a `<meta>` charset decides, else
 * UTF-8 when the bytes are valid UTF-8, else Windows-1252 (what LibreOffice
 * assumes). The sanitized page is written back as UTF-8.
 */
export function decodeHtml(bytes: Buffer): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder("utf-8").decode(bytes);
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes);
  const declared = /<meta[^>]*?charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(bytes.subarray(0, 4096).toString("latin1"))?.[1];
  // a <meta> that says UTF-16 is wrong by definition (it was readable as ASCII): the HTML standard reads UTF-8 then
  if (declared && !/^utf-?16/i.test(declared)) {
    try {
      return new TextDecoder(declared).decode(bytes);
    } catch {
      // an unknown label: guess as below
    }
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder("windows-1252").decode(bytes);
  }
}

/** Anything in CSS that could name a resource, or hide one from these checks (escapes, comments, markup). */
const UNSAFE_CSS = /url|image|expression|binding|behavior|src|\\|\/\*|<|>|@/i;

function cleanCss(root: Root): string {
  root.walkComments((comment) => void comment.remove());
  root.walkAtRules((rule) => {
    // @media and @page hold rules; @import, @font-face, @namespace, ... name resources
    if (!/^(?:media|page)$/i.test(rule.name) || UNSAFE_CSS.test(rule.params)) rule.remove();
  });
  root.walkRules((rule) => {
    if (/[\\<@]|url/i.test(rule.selector)) rule.remove();
  });
  root.walkDecls((decl) => {
    if (UNSAFE_CSS.test(decl.prop) || UNSAFE_CSS.test(decl.value) || UNSAFE_CSS.test(decl.toString())) decl.remove();
  });
  root.walk((node) => {
    node.raws = {};
  });
  return root.toString();
}

/** A stylesheet (the content of `<style>`) without anything that names a resource; "" when it does not parse. */
export function safeStylesheet(css: string): string {
  try {
    return cleanCss(postcss.parse(css)).replace(/\s+/g, " ").trim();
  } catch {
    return "";
  }
}

/** A `style` attribute's declarations without anything that names a resource; "" when they do not parse. */
export function safeDeclarations(style: string): string {
  try {
    const root = postcss.parse(style);
    if (root.nodes.some((node) => node.type !== "decl" && node.type !== "comment")) return "";
    return cleanCss(root).replace(/\s+/g, " ").trim();
  } catch {
    return "";
  }
}
