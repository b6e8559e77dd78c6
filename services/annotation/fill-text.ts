import type { Element } from "@xmldom/xmldom";
import type { ContentControl } from "./content-control.js";
import { descendants, removeChildren, textRun, W, wChild, wChildren, wElement } from "./wordml.js";

/**
 * Puts `value` in a text control, lines as line breaks (inline control) or
 * paragraphs (a control around paragraphs or a table cell). The run style is
 * the control's own, or with `keepTextNodeStyles` the template text's (its
 * placeholder style dropped). Returns why it cannot, or undefined.
 */
export function fillText(control: ContentControl, value: string, keepTextNodeStyles: boolean): string | undefined {
  const content = control.content ?? (control.element.appendChild(wElement(control.document, "sdtContent")) as Element);
  const runProperties = keepTextNodeStyles ? templateRunProperties(content) : control.properties && wChild(control.properties, "rPr");
  const children = wChildren(content);
  if (children.some((e) => e.localName === "tr")) return `${control.describe()} wraps table rows: fill it with type "table"`;
  const cell = children.find((e) => e.localName === "tc");
  if (cell) {
    fillParagraphs(cell, value, runProperties, wChild(cell, "tcPr"));
  } else if (children.some((e) => e.localName === "p" || e.localName === "tbl")) {
    fillParagraphs(content, value, runProperties);
  } else {
    removeChildren(content);
    content.appendChild(textRun(control.document, value, runProperties));
  }
  control.markFilled();
  return undefined;
}

/** Replaces what `container` holds (after `keep`) with one paragraph per line, styled as its first paragraph. */
function fillParagraphs(container: Element, value: string, runProperties: Element | undefined, keep?: Element): void {
  const document = container.ownerDocument!;
  const first = descendants(container, W, "p")[0];
  const paragraphProperties = first && wChild(first, "pPr");
  removeChildren(container);
  if (keep) container.appendChild(keep);
  for (const line of value.split(/\r?\n/)) {
    const paragraph = wElement(document, "p");
    if (paragraphProperties) paragraph.appendChild(paragraphProperties.cloneNode(true));
    paragraph.appendChild(textRun(document, line, runProperties));
    container.appendChild(paragraph);
  }
}

/** The first run's properties in the control, without the placeholder style Word gives placeholder text. */
function templateRunProperties(content: Element): Element | undefined {
  const run = descendants(content, W, "r")[0];
  const properties = run && wChild(run, "rPr");
  if (!properties) return undefined;
  const copy = properties.cloneNode(true) as Element;
  const style = wChild(copy, "rStyle");
  if (style && /placeholder/i.test(style.getAttributeNS(W, "val") ?? style.getAttribute("w:val") ?? "")) copy.removeChild(style);
  return copy;
}

/** Puts `value` in a table cell, in its first paragraph's and first run's style. */
export function fillCell(cell: Element, value: string): void {
  const run = descendants(cell, W, "r")[0];
  fillParagraphs(cell, value, run && wChild(run, "rPr"), wChild(cell, "tcPr"));
}
