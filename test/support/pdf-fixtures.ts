import { PDFDocument, StandardFonts } from "pdf-lib";

/** An A4 PDF of `pages` pages, each with a heading and `linesPerPage` lines of text. */
export async function textPdf(pages: number, linesPerPage = 40): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (let page = 1; page <= pages; page++) {
    const p = document.addPage([595, 842]);
    p.drawText(`Agreement, page ${page} of ${pages}`, { x: 72, y: 770, size: 16, font });
    for (let line = 0; line < linesPerPage; line++) {
      p.drawText(`Clause ${page}.${line + 1}: the parties agree to the terms set out in this line of text.`, { x: 72, y: 740 - line * 16, size: 10, font });
    }
  }
  return Buffer.from(await document.save());
}
