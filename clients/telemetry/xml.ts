/**
 * A small non-validating XML reader for the few OOXML parts this package
 * reads (settings, custom and core properties, content types, relationships).
 * It sees the document the way the reference client's parser (xml-js over sax,
 * strict) does: qualified names as written, entities decoded, text runs that
 * are only whitespace dropped. Elements keep their source offsets so a part can
 * be edited by splicing text without re-serialising anything else.
 */

export class XmlError extends Error {
  override name = "XmlError";
}

export interface XmlElement {
  readonly kind: "element";
  /** The qualified name as written, e.g. "w15:docId". */
  readonly name: string;
  /** Attribute values by qualified name, entities decoded. */
  readonly attributes: ReadonlyMap<string, string>;
  readonly children: readonly XmlNode[];
  /** Offset of the "<" of the start tag. */
  readonly start: number;
  /** Offset just after the ">" of the start tag. */
  readonly startTagEnd: number;
  /** Offset just after the ">" of the end tag (equals startTagEnd when self-closing). */
  readonly end: number;
  readonly selfClosing: boolean;
}

export type XmlNode = XmlElement | { readonly kind: "text"; readonly text: string } | { readonly kind: "cdata"; readonly text: string };

type MutableElement = { -readonly [K in keyof XmlElement]: XmlElement[K] } & { children: XmlNode[] };

const PREDEFINED = new Map([
  ["lt", "<"],
  ["gt", ">"],
  ["amp", "&"],
  ["quot", '"'],
  ["apos", "'"],
]);

export function decodeEntities(raw: string): string {
  if (!raw.includes("&")) return raw;
  return raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z]+);/g, (match, entity: string) => {
    if (entity.startsWith("#")) {
      const code = entity[1] === "x" ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
      return code <= 0x10ffff ? String.fromCodePoint(code) : match;
    }
    return PREDEFINED.get(entity) ?? match;
  });
}

export function escapeXml(value: string): string {
  return value.replace(/[<>&"']/g, (c) => `&${c === "<" ? "lt" : c === ">" ? "gt" : c === "&" ? "amp" : c === '"' ? "quot" : "apos"};`);
}

const NAME_END = /[\s/>=]/;

/** Parses a whole document and returns its root element. Throws XmlError on malformed input. */
export function parseXml(source: string): XmlElement {
  const stack: MutableElement[] = [];
  let root: MutableElement | undefined;
  let i = 0;
  const fail = (why: string): never => {
    throw new XmlError(`${why} at offset ${i}`);
  };
  const until = (token: string, from: number): number => {
    const at = source.indexOf(token, from);
    return at === -1 ? fail(`unterminated markup, expected "${token}"`) : at;
  };
  const readName = (): string => {
    const from = i;
    while (i < source.length && !NAME_END.test(source[i]!)) i++;
    if (i === from) fail("expected a name");
    return source.slice(from, i);
  };
  const skipSpace = (): void => {
    while (i < source.length && /\s/.test(source[i]!)) i++;
  };

  while (i < source.length) {
    const lt = source.indexOf("<", i);
    const textEnd = lt === -1 ? source.length : lt;
    if (textEnd > i) {
      const text = decodeEntities(source.slice(i, textEnd));
      const parent = stack[stack.length - 1];
      if (text.trim() !== "") {
        if (!parent) fail("text outside the root element");
        else parent.children.push({ kind: "text", text });
      }
    }
    if (lt === -1) break;
    i = lt;
    if (source.startsWith("<?", i)) {
      i = until("?>", i + 2) + 2;
    } else if (source.startsWith("<!--", i)) {
      i = until("-->", i + 4) + 3;
    } else if (source.startsWith("<![CDATA[", i)) {
      const end = until("]]>", i + 9);
      const parent = stack[stack.length - 1] ?? fail("CDATA outside the root element");
      parent.children.push({ kind: "cdata", text: source.slice(i + 9, end) });
      i = end + 3;
    } else if (source.startsWith("<!", i)) {
      let depth = 0;
      let j = i + 2;
      for (; j < source.length; j++) {
        const c = source[j];
        if (c === "[") depth++;
        else if (c === "]") depth--;
        else if (c === ">" && depth <= 0) break;
      }
      if (j >= source.length) fail("unterminated declaration");
      i = j + 1;
    } else if (source.startsWith("</", i)) {
      const close = until(">", i);
      const name = source.slice(i + 2, close).trim();
      const open = stack.pop();
      if (!open || open.name !== name) fail(`unexpected end tag </${name}>`);
      else open.end = close + 1;
      i = close + 1;
    } else {
      i++;
      const name = readName();
      const attributes = new Map<string, string>();
      let selfClosing = false;
      for (;;) {
        skipSpace();
        if (source.startsWith("/>", i)) {
          selfClosing = true;
          i += 2;
          break;
        }
        if (source[i] === ">") {
          i++;
          break;
        }
        if (i >= source.length) fail("unterminated start tag");
        const attribute = readName();
        skipSpace();
        if (source[i] !== "=") fail(`attribute ${attribute} has no value`);
        i++;
        skipSpace();
        const quote = source[i];
        if (quote !== '"' && quote !== "'") fail(`attribute ${attribute} is not quoted`);
        const valueEnd = until(quote!, i + 1);
        attributes.set(attribute, decodeEntities(source.slice(i + 1, valueEnd)));
        i = valueEnd + 1;
      }
      const element: MutableElement = { kind: "element", name, attributes, children: [], start: lt, startTagEnd: i, end: i, selfClosing };
      const parent = stack[stack.length - 1];
      if (parent) parent.children.push(element);
      else if (root) fail("more than one root element");
      else root = element;
      if (!selfClosing) stack.push(element);
    }
  }
  if (stack.length > 0) fail(`unclosed element <${stack[stack.length - 1]!.name}>`);
  return root ?? fail("no root element");
}

/** True when `name` is `local` or `prefix:local` with a non-empty prefix (the reference client's rule). */
export function hasLocalName(name: string, local: string): boolean {
  return name === local || (name.endsWith(`:${local}`) && name.length > local.length + 1);
}

export function prefixOf(name: string): string {
  const colon = name.indexOf(":");
  return colon > 0 ? name.slice(0, colon) : "";
}

export function childElements(element: XmlElement): XmlElement[] {
  return element.children.filter((node): node is XmlElement => node.kind === "element");
}

/** The element's first child when it is text, as the reference reads values; null otherwise or when empty. */
export function firstText(element: XmlElement | undefined): string | null {
  const first = element?.children[0];
  return first?.kind === "text" && first.text !== "" ? first.text : null;
}

/** The prefix that `element` binds to `uri` ("" for a default namespace), or undefined when it binds none. */
export function prefixFor(element: XmlElement, uri: string): string | undefined {
  for (const [attribute, value] of element.attributes) {
    if (value !== uri) continue;
    if (attribute === "xmlns") return "";
    if (attribute.startsWith("xmlns:")) return attribute.slice(6);
  }
  return undefined;
}

/** `source` with `markup` added as the last child of `parent` (a self-closing parent is opened up). */
export function appendChild(source: string, parent: XmlElement, markup: string): string {
  if (!parent.selfClosing) {
    const closeStart = source.lastIndexOf("</", parent.end);
    return source.slice(0, closeStart) + markup + source.slice(closeStart);
  }
  const openTag = source.slice(parent.start, parent.startTagEnd).replace(/\s*\/>$/, ">");
  return source.slice(0, parent.start) + openTag + markup + `</${parent.name}>` + source.slice(parent.end);
}

/** `source` with `element` (start tag to end tag) replaced by `markup`. */
export function replaceElement(source: string, element: XmlElement, markup: string): string {
  return source.slice(0, element.start) + markup + source.slice(element.end);
}

/** How a part's bytes were encoded, so an edited part is written back the same way. */
export interface XmlEncoding {
  readonly charset: "utf-8" | "utf-16le" | "utf-16be";
  readonly bom: boolean;
}

export function decodeXml(bytes: Uint8Array): { source: string; encoding: XmlEncoding } {
  const [b0, b1, b2, b3] = bytes;
  let charset: XmlEncoding["charset"] = "utf-8";
  let bom = b0 === 0xef && b1 === 0xbb && b2 === 0xbf;
  if (b0 === 0xff && b1 === 0xfe) [charset, bom] = ["utf-16le", true];
  else if (b0 === 0xfe && b1 === 0xff) [charset, bom] = ["utf-16be", true];
  else if (b0 === 0x3c && b1 === 0 && b2 === 0x3f && b3 === 0) charset = "utf-16le";
  else if (b0 === 0 && b1 === 0x3c && b2 === 0 && b3 === 0x3f) charset = "utf-16be";
  return { source: new TextDecoder(charset).decode(bytes), encoding: { charset, bom } };
}

export function encodeXml(source: string, encoding: XmlEncoding): Uint8Array {
  if (encoding.charset === "utf-8") {
    const body = new TextEncoder().encode(source);
    if (!encoding.bom) return body;
    const out = new Uint8Array(body.length + 3);
    out.set([0xef, 0xbb, 0xbf]);
    out.set(body, 3);
    return out;
  }
  const text = encoding.bom ? `\ufeff${source}` : source;
  const out = new Uint8Array(text.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < text.length; i++) view.setUint16(i * 2, text.charCodeAt(i), encoding.charset === "utf-16le");
  return out;
}
