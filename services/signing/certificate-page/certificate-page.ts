// The audit-trail certificate page of a signed document: appended to the PDF (before
// the signature placeholder is added, so the signature covers it) as one or more
// pages the size of the document's last page.
//
// Text is drawn with embedded Unicode fonts (certificate-page/fonts.ts: DejaVu Sans
// and Droid Sans Fallback from Debian packages), chosen per character by glyph
// coverage and subset-embedded, so names in Latin, Cyrillic, Greek, Arabic and CJK
// scripts render and extract. Arabic is shaped by fontkit and laid right to left;
// full bidi is not implemented (see certificate-page/text.ts).
//
// Everything that does not depend on the document is done once per process: fonts
// parsed, strings shaped and measured (text.ts, shaping.ts), the Latin subsets
// encoded (document-fonts.ts). The pages' content streams and fonts are written as
// PDF objects directly (page-content.ts, subset-font.ts), not through pdf-lib's
// drawing API, which would shape every string again and subset the fonts per document.
import { PDFName, PageSizes, type PDFDocument, grayscale, rgb } from "pdf-lib";
import { DocumentFonts } from "./document-fonts.js";
import { type FontSet, type Style, loadFonts } from "./fonts.js";
import { PageContent } from "./page-content.js";
import type { AuditEvent, Signer } from "../model.js";
import { formatTime, summarizeEvent } from "./summary.js";
import { TextEngine, sanitize, truncate } from "./text.js";

export { CertificateFontError, loadFonts as loadCertificateFonts } from "./fonts.js";
export { summarizeEvent } from "./summary.js";

export interface CertificateAudit {
  /** The request's `eventId`, or a generated ID. */
  documentId: string;
  /** SHA-256 of the document as received, hex. */
  documentSha256: string;
  signer: Signer;
  signedAt: Date;
  certificate: { subject: string; sha256Fingerprint: string };
  /** In the order recorded; drawn in this order. */
  events: AuditEvent[];
}

export const CERTIFICATE_TITLE = "Audit Trail Certificate";
export const CERTIFICATE_CONTINUED_TITLE = `${CERTIFICATE_TITLE} (continued)`;
export const AUDIT_TRAIL_CONTINUED_TITLE = "Audit trail (continued)";

/** Pages smaller than this in either direction (labels, tickets) get an A4 certificate page instead. */
const MIN_PAGE_SIDE = 200;
const MAX_PAGE_SIDE = 14_400;
/** Longest rendering of a signer or certificate field. */
const MAX_FIELD_CHARS = 2_000;

const SIZE = { title: 16, heading: 11, body: 9, small: 7.5 } as const;
const LEADING = 1.32;
const TEXT = grayscale(0);
const MUTED = grayscale(0.4);
const RULE = rgb(0.75, 0.75, 0.75);

type Color = ReturnType<typeof grayscale>;

interface TextOp {
  kind: "text";
  page: number;
  x: number;
  /** Baseline. */
  y: number;
  text: string;
  style: Style;
  size: number;
  color: Color;
}

interface RuleOp {
  kind: "rule";
  page: number;
  y: number;
}

interface Column {
  x: number;
  width: number;
  text: string;
  style?: Style;
  size?: number;
  color?: Color;
}

const engines = new WeakMap<FontSet, TextEngine>();

/**
 * Appends the certificate page(s) for `audit` to `document` and returns how many
 * were added (at least 1). The fonts are read once per process; a missing font
 * package rejects with a CertificateFontError naming it.
 */
export async function appendCertificatePages(
  document: PDFDocument,
  audit: CertificateAudit,
  pageSize: [number, number] = certificatePageSize(document),
): Promise<number> {
  const fonts = await loadFonts();
  let engine = engines.get(fonts);
  if (!engine) engines.set(fonts, (engine = new TextEngine(fonts)));
  const [width, height] = pageSize;
  const layout = new Layout(engine, width, height);
  layout.build(audit);
  layout.render(document, new DocumentFonts(fonts, `${audit.documentSha256}/${audit.documentId}`));
  return layout.pageCount;
}

/** The size the last page shows (its CropBox, turned by its /Rotate), or A4 for an empty or odd-sized document. */
export function certificatePageSize(document: PDFDocument): [number, number] {
  const count = document.getPageCount();
  if (count === 0) return [...PageSizes.A4];
  const page = document.getPage(count - 1);
  return certificatePageSizeFor(page.getCropBox(), page.getRotation().angle);
}

/** The certificate page size for a last page showing `box` turned by `rotation` degrees. */
export function certificatePageSizeFor(box: { width: number; height: number }, rotation: number): [number, number] {
  const turned = Math.abs(rotation) % 180 === 90;
  const width = Math.abs(turned ? box.height : box.width);
  const height = Math.abs(turned ? box.width : box.height);
  const fits = (side: number) => Number.isFinite(side) && side >= MIN_PAGE_SIDE && side <= MAX_PAGE_SIDE;
  return fits(width) && fits(height) ? [width, height] : [...PageSizes.A4];
}

class Layout {
  readonly #engine: TextEngine;
  readonly #width: number;
  readonly #height: number;
  readonly #margin: number;
  readonly #ops: (TextOp | RuleOp)[] = [];
  #page = -1;
  /** Top of the free space on the current page. */
  #y = 0;
  #continue: () => void = () => {};

  constructor(engine: TextEngine, width: number, height: number) {
    this.#engine = engine;
    this.#width = width;
    this.#height = height;
    this.#margin = Math.min(56, Math.max(24, Math.min(width, height) * 0.08));
  }

  get pageCount(): number {
    return this.#page + 1;
  }

  get #left(): number {
    return this.#margin;
  }

  get #contentWidth(): number {
    return this.#width - 2 * this.#margin;
  }

  /** Lowest baseline region: the footer lives below it. */
  get #bottom(): number {
    return this.#margin + SIZE.small * 2;
  }

  build(audit: CertificateAudit): void {
    this.#newPage();
    this.#paragraph(CERTIFICATE_TITLE, "bold", SIZE.title, TEXT);
    this.#paragraph(
      "This page is part of the signed document: it records who signed it, when, and what happened before signing.",
      "regular",
      SIZE.small,
      MUTED,
    );
    this.#y -= SIZE.body * 0.5;
    this.#continue = () => this.#paragraph(CERTIFICATE_CONTINUED_TITLE, "bold", SIZE.heading, TEXT);

    const field = (value: string) => truncate(sanitize(value), MAX_FIELD_CHARS);
    this.#section("Document", [
      ["Document ID", field(audit.documentId)],
      ["Document SHA-256", field(audit.documentSha256)],
    ]);
    const signer: [string, string][] = [
      ["Name", field(audit.signer.name)],
      ["E-mail", field(audit.signer.email)],
    ];
    if (audit.signer.ip) signer.push(["IP address", field(audit.signer.ip)]);
    if (audit.signer.userAgent) signer.push(["User agent", field(audit.signer.userAgent)]);
    signer.push(["Signed at (UTC)", formatTime(audit.signedAt)]);
    this.#section("Signer", signer);
    this.#section("Signing certificate", [
      ["Subject", field(audit.certificate.subject)],
      ["SHA-256 fingerprint", field(audit.certificate.sha256Fingerprint)],
    ]);
    this.#events(audit.events);
  }

  #newPage(): void {
    this.#page++;
    this.#y = this.#height - this.#margin;
    if (this.#page > 0) this.#continue();
  }

  #room(height: number): boolean {
    return this.#y - height >= this.#bottom;
  }

  #text(x: number, text: string, style: Style, size: number, color: Color): void {
    if (text) this.#ops.push({ kind: "text", page: this.#page, x, y: this.#y - size, text, style, size, color });
  }

  /** Starts a new page unless `height` fits here or would not fit on a fresh page either. */
  #keep(height: number): void {
    if (!this.#room(height) && height <= this.#fullPage) this.#newPage();
  }

  get #fullPage(): number {
    return this.#height - this.#margin - this.#bottom - SIZE.heading * LEADING * 2;
  }

  #paragraph(text: string, style: Style, size: number, color: Color): void {
    this.#row([{ x: this.#left, width: this.#contentWidth, text, style, size, color }], 0);
  }

  /**
   * Columns side by side, each wrapped to its width. A row that fits on a fresh page
   * is not split; a longer one continues line by line on the next pages.
   */
  #row(columns: Column[], gap: number): void {
    const wrapped = columns.map((column) => {
      const style = column.style ?? "regular";
      const size = column.size ?? SIZE.body;
      const lines = this.#engine.lines(style, column.text, size, column.width);
      return { ...column, style, size, color: column.color ?? TEXT, lines };
    });
    const leading = Math.max(...wrapped.map((column) => column.size)) * LEADING;
    const count = Math.max(...wrapped.map((column) => column.lines.length));
    this.#keep(count * leading);
    for (let i = 0; i < count; i++) {
      if (!this.#room(leading)) this.#newPage();
      for (const column of wrapped) {
        const line = column.lines[i];
        if (line) this.#text(column.x, line, column.style, column.size, column.color);
      }
      this.#y -= leading;
    }
    this.#y -= gap;
  }

  #heading(text: string, following: number): void {
    const lines = this.#engine.lines("bold", text, SIZE.heading, this.#contentWidth).length;
    const height = lines * SIZE.heading * LEADING + 8 + following;
    if (!this.#room(height)) this.#newPage();
    this.#y -= 4;
    this.#paragraph(text, "bold", SIZE.heading, TEXT);
    this.#ops.push({ kind: "rule", page: this.#page, y: this.#y + 1 });
    this.#y -= 4;
  }

  #section(title: string, rows: [string, string][]): void {
    const labelWidth = Math.min(120, this.#contentWidth * 0.3);
    const valueX = this.#left + labelWidth + 8;
    this.#heading(title, SIZE.body * LEADING);
    for (const [label, value] of rows) {
      this.#row(
        [
          { x: this.#left, width: labelWidth, text: label, color: MUTED },
          { x: valueX, width: this.#left + this.#contentWidth - valueX, text: value || "—" },
        ],
        2,
      );
    }
    this.#y -= 6;
  }

  #events(events: AuditEvent[]): void {
    const measure = (text: string, style: Style = "regular") => this.#engine.width(style, text, SIZE.body);
    const gap = 8;
    const number = Math.max(measure(String(events.length)), measure("#", "bold")) + gap;
    const time = measure("0000-00-00T00:00:00.000Z") + gap;
    const type = measure("field_change") + gap;
    const x = [this.#left, this.#left + number, this.#left + number + time, this.#left + number + time + type];
    const right = this.#left + this.#contentWidth;
    // on a narrow page the details go on their own line under time and type
    const stacked = right - x[3]! < this.#contentWidth * 0.35;
    const widths = [number - gap, time - gap, type - gap, stacked ? right - x[1]! : right - x[3]!];
    const detailsX = stacked ? x[1]! : x[3]!;
    const cells = (texts: string[], style: Style = "regular", color: Color = TEXT): Column[] => {
      const columns = texts.slice(0, 3).map((text, i) => ({ x: x[i]!, width: widths[i]!, text, style, color }));
      if (!stacked) columns.push({ x: detailsX, width: widths[3]!, text: texts[3]!, style, color });
      return columns;
    };
    const leading = SIZE.body * LEADING;
    const height = (texts: string[], style: Style = "regular") => {
      const lines = (i: number) => this.#engine.lines(style, texts[i]!, SIZE.body, widths[i]!).length;
      const first = Math.max(lines(0), lines(1), lines(2));
      return (stacked ? first + lines(3) : Math.max(first, lines(3))) * leading + 3;
    };
    const row = (texts: string[], style: Style = "regular", color: Color = TEXT, gapAfter = 2) => {
      if (!stacked) return this.#row(cells(texts, style, color), gapAfter);
      this.#keep(height(texts, style));
      this.#row(cells(texts, style, color), 0);
      this.#row([{ x: detailsX, width: widths[3]!, text: texts[3]!, style, color }], gapAfter);
    };
    const headerTexts = ["#", "Time (UTC)", "Event", "Details"];
    const header = () => row(headerTexts, "bold", MUTED, 3);
    const cellsOf = (event: AuditEvent, index: number) => [
      String(index + 1),
      formatTime(event.timestamp),
      sanitize(String(event.type)),
      summarizeEvent(event),
    ];

    this.#heading(
      `Audit trail: ${events.length} event${events.length === 1 ? "" : "s"}, in the order recorded`,
      // the column header and the first event stay with the heading
      height(headerTexts, "bold") + (events[0] ? height(cellsOf(events[0], 0)) : leading),
    );
    header();
    this.#continue = () => {
      this.#paragraph(AUDIT_TRAIL_CONTINUED_TITLE, "bold", SIZE.heading, TEXT);
      this.#y -= 4;
      header();
    };
    events.forEach((event, index) => row(cellsOf(event, index)));
    if (events.length === 0) this.#paragraph("No events were recorded.", "regular", SIZE.body, MUTED);
  }

  render(document: PDFDocument, fonts: DocumentFonts): void {
    const pages = Array.from({ length: this.pageCount }, () => new PageContent());
    for (let i = 0; i < pages.length; i++) {
      this.#footer(i, `${CERTIFICATE_TITLE} · page ${i + 1} of ${pages.length}`);
    }
    for (const op of this.#ops) {
      const content = pages[op.page]!;
      if (op.kind === "rule") {
        content.rule(this.#left, this.#left + this.#contentWidth, op.y, 0.5, RULE);
        continue;
      }
      let x = op.x;
      for (const segment of this.#engine.segments(op.style, op.text)) {
        for (const run of fonts.runs(segment.face, this.#engine.glyphs(segment))) {
          content.text(run.font, op.size, op.color, x, op.y, run.hex);
          x += run.width * op.size;
        }
      }
    }
    const { context } = document;
    const resources = fonts.write(context);
    for (const content of pages) {
      const page = document.addPage([this.#width, this.#height]);
      page.node.set(PDFName.of("Resources"), context.obj({ Font: resources }));
      page.node.set(PDFName.of("Contents"), content.write(context));
    }
  }

  /** The footer of page `page`. */
  #footer(page: number, text: string): void {
    this.#ops.push({ kind: "text", page, x: this.#left, y: this.#margin, text, style: "regular", size: SIZE.small, color: MUTED });
  }
}
