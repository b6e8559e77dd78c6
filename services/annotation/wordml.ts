import type { Document, Element } from "@xmldom/xmldom";

/** WordprocessingML and the DrawingML namespaces a picture lives in. */
export const W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
export const R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
export const WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing";
export const A = "http://schemas.openxmlformats.org/drawingml/2006/main";

/** The element children of `parent` named `w:<local>` (all w: children when no name is given). */
export function wChildren(parent: Element, local?: string): Element[] {
  const found: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && (node as Element).namespaceURI === W && (local === undefined || (node as Element).localName === local)) found.push(node as Element);
  }
  return found;
}

export function wChild(parent: Element, local: string): Element | undefined {
  return wChildren(parent, local)[0];
}

/** Every descendant of `root` in namespace `ns` named `local`, in document order. */
export function descendants(root: Element | Document, ns: string, local: string): Element[] {
  return Array.from(root.getElementsByTagNameNS(ns, local));
}

/** A `w:<local>` element, with w:val when given. */
export function wElement(document: Document, local: string, val?: string): Element {
  const element = document.createElementNS(W, `w:${local}`);
  if (val !== undefined) element.setAttributeNS(W, "w:val", val);
  return element;
}

/** A run holding `text` (line breaks as w:br), with a copy of `runProperties` when given. */
export function textRun(document: Document, text: string, runProperties: Element | undefined): Element {
  const run = wElement(document, "r");
  if (runProperties) run.appendChild(runProperties.cloneNode(true));
  text.split(/\r?\n/).forEach((line, index) => {
    if (index > 0) run.appendChild(wElement(document, "br"));
    const t = wElement(document, "t");
    t.setAttribute("xml:space", "preserve");
    t.appendChild(document.createTextNode(line));
    run.appendChild(t);
  });
  return run;
}

export function removeChildren(element: Element): void {
  while (element.firstChild) element.removeChild(element.firstChild);
}
