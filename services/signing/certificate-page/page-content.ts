// The content stream of one certificate page, written as PDF operators directly: text
// as runs of CIDs of the page's Type0 fonts, and thin rules.
import { deflateSync } from "node:zlib";
import { type Color, ColorTypes, PDFRawStream, type PDFContext, type PDFRef } from "pdf-lib";
import { pdfNumber } from "./pdf-syntax.js";

/** Fill and stroke operators by color: the page's few colors are used by every line. */
const colorOperators = new WeakMap<Color, { fill: string; stroke: string }>();

function colorOperator(color: Color, stroke: boolean): string {
  let operators = colorOperators.get(color);
  if (!operators) {
    const values =
      color.type === ColorTypes.Grayscale
        ? [color.gray]
        : color.type === ColorTypes.RGB
          ? [color.red, color.green, color.blue]
          : [color.cyan, color.magenta, color.yellow, color.key];
    const operator = { 1: "g", 3: "rg", 4: "k" }[values.length]!;
    const components = values.map(pdfNumber).join(" ");
    colorOperators.set(color, (operators = { fill: `${components} ${operator}`, stroke: `${components} ${operator.toUpperCase()}` }));
  }
  return stroke ? operators.stroke : operators.fill;
}

export class PageContent {
  readonly #operators: string[] = [];
  #inText = false;
  #font = "";
  #fill = "";

  /** Shows glyphs of the font with resource key `font` (`hex`: their CIDs), the baseline starting at (x, y). */
  text(font: string, size: number, color: Color, x: number, y: number, hex: string): void {
    if (!this.#inText) this.#operators.push("BT");
    this.#inText = true;
    const fill = colorOperator(color, false);
    if (fill !== this.#fill) this.#operators.push((this.#fill = fill));
    const fontOperator = `/${font} ${pdfNumber(size)} Tf`;
    if (fontOperator !== this.#font) this.#operators.push((this.#font = fontOperator));
    this.#operators.push(`1 0 0 1 ${pdfNumber(x)} ${pdfNumber(y)} Tm <${hex}> Tj`);
  }

  /** A horizontal line from x1 to x2 at height y. */
  rule(x1: number, x2: number, y: number, thickness: number, color: Color): void {
    this.#endText();
    const [from, to, at] = [x1, x2, y].map(pdfNumber);
    this.#operators.push(`q ${colorOperator(color, true)} ${pdfNumber(thickness)} w ${from} ${at} m ${to} ${at} l S Q`);
  }

  /** Registers the stream in `context`. */
  write(context: PDFContext): PDFRef {
    this.#endText();
    // level 1: much faster than the default, and as small for these few kilobytes of operators (bench/README.md, "Certificate page")
    const contents = deflateSync(Buffer.from(this.#operators.join("\n"), "latin1"), { level: 1 });
    return context.register(PDFRawStream.of(context.obj({ Filter: "FlateDecode" }), contents));
  }

  #endText(): void {
    if (this.#inText) this.#operators.push("ET");
    this.#inText = false;
  }
}
