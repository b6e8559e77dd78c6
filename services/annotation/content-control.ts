import type { Document, Element } from "@xmldom/xmldom";
import { descendants, W, wChild, wChildren } from "./wordml.js";

/** What a content control holds, as Word's and LibreOffice's control types say. */
export type ControlKind = "text" | "picture" | "other";

/**
 * A content control (`w:sdt`) of a template part: its tag (matched by a
 * field's `id`), its title (`w:alias`, matched by `group`), its kind, and its
 * content.
 */
export class ContentControl {
  constructor(
    readonly part: string,
    readonly document: Document,
    readonly element: Element,
  ) {}

  get tag(): string {
    return this.propertyValue("tag");
  }

  get title(): string {
    return this.propertyValue("alias");
  }

  /** Plain and rich text, dates and lists hold text; a picture control an image; checkboxes and the rest are not filled. */
  get kind(): ControlKind {
    const properties = this.properties;
    if (!properties) return "text";
    if (wChild(properties, "picture")) return "picture";
    const typed = wChildren(properties).map((e) => e.localName ?? "");
    if (typed.some((name) => ["checkbox", "docPartObj", "docPartList", "equation", "citation", "bibliography", "group"].includes(name)) || properties.getElementsByTagNameNS("http://schemas.microsoft.com/office/word/2010/wordml", "checkbox").length > 0) return "other";
    return "text";
  }

  get properties(): Element | undefined {
    return wChild(this.element, "sdtPr");
  }

  get content(): Element | undefined {
    return wChild(this.element, "sdtContent");
  }

  /** The first table inside the control, for a table field. */
  get table(): Element | undefined {
    const content = this.content;
    return content ? descendants(content, W, "tbl")[0] : undefined;
  }

  /** Where it is, for messages: its tag or title, and its part. */
  describe(): string {
    return `the content control ${this.tag ? `tagged "${this.tag}"` : `titled "${this.title}"`} in ${this.part}`;
  }

  /** Filled: the placeholder flag goes, so Word and LibreOffice show the value as the control's content, not as placeholder text. */
  markFilled(): void {
    const flag = this.properties && wChild(this.properties, "showingPlcHdr");
    if (flag) this.properties!.removeChild(flag);
  }

  private propertyValue(local: string): string {
    const element = this.properties && wChild(this.properties, local);
    return element?.getAttributeNS(W, "val") ?? element?.getAttribute("w:val") ?? "";
  }
}

/** Every content control of the parts, outermost first. */
export function contentControls(parts: Map<string, Document>): ContentControl[] {
  const controls: ContentControl[] = [];
  for (const [part, document] of parts) {
    for (const element of descendants(document, W, "sdt")) controls.push(new ContentControl(part, document, element));
  }
  return controls;
}
