import { posix } from "node:path";
import type { Document } from "@xmldom/xmldom";
import type { DocxPackage } from "./docx-package.js";
import type { ImageValue } from "./image-value.js";

const IMAGE_RELATIONSHIP = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image";
const RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships";
const CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types";

/**
 * The images one fill adds to a package: each image (one ImageValue) stored
 * once as word/media/annotated-N.EXT, and related once to each part that
 * shows it, however many controls show it. What is in the package already
 * (media names, relationship ids, content types) is read once per fill, not
 * once per image.
 */
export class ImageParts {
  private readonly media = new Map<ImageValue, { name: string; n: number }>();
  /** Relationship id by "rels part\nmedia part". */
  private readonly related = new Map<string, string>();
  /** Relationship ids in use, by rels part. */
  private readonly ids = new Map<string, Set<string>>();
  private readonly typed = new Set<string>();
  private next = 1;

  constructor(private readonly docx: DocxPackage) {}

  /** The id of the relationship by which `part` shows `image`; the media part and the relationship are added the first time. */
  relationshipId(part: string, image: ImageValue): string {
    const media = this.mediaPart(image);
    const relsPart = posix.join(posix.dirname(part), "_rels", `${posix.basename(part)}.rels`);
    const key = `${relsPart}\n${media.name}`;
    const known = this.related.get(key);
    if (known) return known;
    const rels = this.relationships(relsPart);
    const ids = this.idsIn(relsPart, rels);
    let id = `rIdAnnotated${media.n}`;
    for (let i = 1; ids.has(id); i++) id = `rIdAnnotated${media.n}_${i}`;
    ids.add(id);
    const relationship = rels.createElementNS(RELATIONSHIPS, "Relationship");
    relationship.setAttribute("Id", id);
    relationship.setAttribute("Type", IMAGE_RELATIONSHIP);
    relationship.setAttribute("Target", posix.relative(posix.dirname(part), media.name));
    rels.documentElement!.appendChild(relationship);
    this.related.set(key, id);
    return id;
  }

  private mediaPart(image: ImageValue): { name: string; n: number } {
    const stored = this.media.get(image);
    if (stored) return stored;
    while (this.docx.has(`word/media/annotated-${this.next}.${image.extension}`)) this.next++;
    const media = { name: `word/media/annotated-${this.next}.${image.extension}`, n: this.next++ };
    this.docx.put(media.name, new Uint8Array(image.bytes));
    this.ensureDefaultContentType(image.extension);
    this.media.set(image, media);
    return media;
  }

  private relationships(relsPart: string): Document {
    if (!this.docx.has(relsPart)) this.docx.put(relsPart, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${RELATIONSHIPS}"/>`);
    return this.docx.xml(relsPart)!;
  }

  private idsIn(relsPart: string, rels: Document): Set<string> {
    let ids = this.ids.get(relsPart);
    if (!ids) {
      ids = new Set(Array.from(rels.getElementsByTagNameNS(RELATIONSHIPS, "Relationship"), (r) => r.getAttribute("Id") ?? ""));
      this.ids.set(relsPart, ids);
    }
    return ids;
  }

  private ensureDefaultContentType(extension: string): void {
    if (this.typed.has(extension)) return;
    this.typed.add(extension);
    const types = this.docx.xml("[Content_Types].xml")!;
    const known = Array.from(types.getElementsByTagNameNS(CONTENT_TYPES, "Default")).some((d) => d.getAttribute("Extension")?.toLowerCase() === extension);
    if (known) return;
    const entry = types.createElementNS(CONTENT_TYPES, "Default");
    entry.setAttribute("Extension", extension);
    entry.setAttribute("ContentType", `image/${extension}`);
    types.documentElement!.appendChild(entry);
  }
}
