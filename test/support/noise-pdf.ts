import { randomBytes } from "node:crypto";
import { concatTransformationMatrix, drawObject, PDFDocument, popGraphicsState, pushGraphicsState } from "pdf-lib";

/**
 * An A4 PDF of `pages` pages, each a full-page image of about `imageBytes`
 * bytes of random RGB noise, stored unfiltered: as incompressible as a
 * scanned document, so the file is about `pages × imageBytes` bytes.
 */
export async function noisePdf(pages: number, imageBytes: number): Promise<Buffer> {
  const document = await PDFDocument.create();
  const side = Math.max(1, Math.floor(Math.sqrt(imageBytes / 3)));
  for (let i = 0; i < pages; i++) {
    const image = document.context.register(
      document.context.stream(randomBytes(side * side * 3), {
        Type: "XObject",
        Subtype: "Image",
        Width: side,
        Height: side,
        ColorSpace: "DeviceRGB",
        BitsPerComponent: 8,
      }),
    );
    const page = document.addPage([595, 842]);
    const name = page.node.newXObject("Scan", image);
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(500, 0, 0, 700, 47, 71), drawObject(name), popGraphicsState());
  }
  return Buffer.from(await document.save());
}
