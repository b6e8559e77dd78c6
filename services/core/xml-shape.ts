import { ServiceError } from "./errors.js";

export interface XmlLimits {
  /** Elements of all the parts of one document together. */
  maxElements: number;
  /** Nesting of each part, 1 for its root element. */
  maxDepth: number;
}

/**
 * How large and how deep the XML parts of a document (a template's body,
 * headers and footers) may be before a DOM parser reads them. xmldom spends
 * about 3 µs and 1.5 KB per element, and a ZIP shrinks repeated markup a
 * thousandfold: 80 KB of DOCX held 5 million elements and took the process
 * past its heap. Real documents stay far below: the largest part of the test
 * corpus has 18,145 elements and nests 17 deep.
 */
export const XML_LIMITS: XmlLimits = { maxElements: 100_000, maxDepth: 256 };

export interface XmlShape {
  /** Elements, counted up to just past the limit. */
  elements: number;
  /** The deepest nesting, 1 for the root element, counted up to just past the limit. */
  depth: number;
}

/**
 * Counts the elements of `xml` and its deepest nesting, by one pass over its
 * markup without parsing it (comments, CDATA sections, processing
 * instructions and the DOCTYPE hold no elements; quoted values may hold `<`
 * and `>`), and stops once either passes its limit. Malformed markup is
 * counted as it reads; the parser refuses it afterwards.
 */
export function xmlShape(xml: string, limits: XmlLimits = XML_LIMITS): XmlShape {
  let elements = 0;
  let depth = 0;
  let deepest = 0;
  for (let at = xml.indexOf("<"); at >= 0 && elements <= limits.maxElements && deepest <= limits.maxDepth; at = xml.indexOf("<", at + 1)) {
    const next = xml[at + 1];
    if (next === "/") {
      depth--;
    } else if (next === "?") {
      at = endOf(xml, "?>", at);
    } else if (next === "!") {
      if (xml.startsWith("!--", at + 1)) at = endOf(xml, "-->", at);
      else if (xml.startsWith("![CDATA[", at + 1)) at = endOf(xml, "]]>", at);
      else at = markupEnd(xml, at);
    } else {
      at = markupEnd(xml, at);
      elements++;
      deepest = Math.max(deepest, depth + 1);
      if (xml[at - 1] !== "/") depth++;
    }
  }
  return { elements, depth: deepest };
}

/**
 * Throws UNPROCESSABLE_DOCUMENT when the part `name` of a document, read after
 * parts that held `counted` elements, passes `limits`; returns the elements
 * of all of them, to pass on with the next part.
 */
export function checkXmlShape(xml: string, name: string, counted = 0, limits: XmlLimits = XML_LIMITS): number {
  const { maxElements, maxDepth } = limits;
  const shape = xmlShape(xml, { maxElements: maxElements - counted, maxDepth });
  if (counted + shape.elements > maxElements) {
    const where = counted > 0 ? `${name} and the parts read before it` : name;
    throw new ServiceError("UNPROCESSABLE_DOCUMENT", `The document has more than ${maxElements} XML elements (${where}); at most ${maxElements} are accepted.`);
  }
  if (shape.depth > maxDepth) {
    throw new ServiceError("UNPROCESSABLE_DOCUMENT", `The document's ${name} nests XML elements more than ${maxDepth} levels deep; at most ${maxDepth} levels are accepted.`);
  }
  return counted + shape.elements;
}

/** The index of the last character of `terminator` after `from`, or the text's end. */
function endOf(xml: string, terminator: string, from: number): number {
  const end = xml.indexOf(terminator, from + 2);
  return end < 0 ? xml.length : end + terminator.length - 1;
}

/**
 * The index of the `>` closing the start tag or declaration at `from`, past
 * quoted values (an attribute's, an entity's) and a DOCTYPE's internal subset
 * (`[…]`), either of which may hold `<` and `>`.
 */
function markupEnd(xml: string, from: number): number {
  let quote = "";
  let brackets = 0;
  for (let at = from + 1; at < xml.length; at++) {
    const c = xml[at];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === "[") {
      brackets++;
    } else if (c === "]") {
      brackets--;
    } else if (c === ">" && brackets <= 0) {
      return at;
    }
  }
  return xml.length;
}
