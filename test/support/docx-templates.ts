/**
 * DOCX templates with Word content controls (w:sdt), as Word writes them,
 * for the /v1/annotate tests: a plain-text control inline, a rich-text control
 * around a paragraph, a picture control, a table control, one control titled
 * in the body and the header, and a check box. Also small solid PNGs.
 */
import { crc32, deflateSync } from "node:zlib";
import { strToU8, zipSync } from "fflate";

const W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
const NAMESPACES = `xmlns:w="${W}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture" xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml"`;

/** A PNG of `width`×`height` pixels of one RGB colour. */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", deflateSync(pixels)), chunk("IEND", Buffer.alloc(0))]);
}

const run = (text: string, style = "") => `<w:r>${style ? `<w:rPr>${style}</w:rPr>` : ""}<w:t xml:space="preserve">${text}</w:t></w:r>`;
const PLACEHOLDER = '<w:rStyle w:val="PlaceholderText"/>';

function controlProperties(tag: string, title: string, id: number, extra = ""): string {
  return `<w:sdtPr>${title ? `<w:alias w:val="${title}"/>` : ""}${tag ? `<w:tag w:val="${tag}"/>` : ""}<w:id w:val="${id}"/><w:showingPlcHdr/>${extra}</w:sdtPr>`;
}

/** A plain-text control inside a paragraph. */
export const inlineText = (tag: string, placeholder: string, id: number, title = "", runStyle = "") =>
  `<w:sdt>${controlProperties(tag, title, id, "<w:text/>")}<w:sdtContent>${run(placeholder, `${PLACEHOLDER}${runStyle}`)}</w:sdtContent></w:sdt>`;

/** A rich-text control around a whole paragraph. */
export const blockText = (tag: string, placeholder: string, id: number) =>
  `<w:sdt>${controlProperties(tag, "", id)}<w:sdtContent><w:p><w:pPr><w:jc w:val="center"/></w:pPr>${run(placeholder, PLACEHOLDER)}</w:p></w:sdtContent></w:sdt>`;

/** A picture control showing the image of relationship `rId`, `cx`×`cy` EMU. */
export const picture = (tag: string, rId: string, id: number, cx = 1905000, cy = 952500) =>
  `<w:p><w:sdt>${controlProperties(tag, "", id, "<w:picture/>")}<w:sdtContent><w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="${cx}" cy="${cy}"/><wp:docPr id="${id}" name="Picture ${id}"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="${id}" name="placeholder.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="${rId}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:sdtContent></w:sdt></w:p>`;

/** A control around a table with a header row and one styled body row. */
export const tableControl = (tag: string, id: number, header: string[], body: string[]) => {
  const cell = (text: string, style: string) => `<w:tc><w:tcPr><w:tcW w:w="2400" w:type="dxa"/></w:tcPr><w:p>${run(text, style)}</w:p></w:tc>`;
  const borders = '<w:tblBorders><w:top w:val="single" w:sz="4"/><w:left w:val="single" w:sz="4"/><w:bottom w:val="single" w:sz="4"/><w:right w:val="single" w:sz="4"/><w:insideH w:val="single" w:sz="4"/><w:insideV w:val="single" w:sz="4"/></w:tblBorders>';
  return `<w:sdt>${controlProperties(tag, "", id)}<w:sdtContent><w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/>${borders}</w:tblPr><w:tblGrid>${header.map(() => '<w:gridCol w:w="2400"/>').join("")}</w:tblGrid><w:tr>${header.map((h) => cell(h, "<w:b/>")).join("")}</w:tr><w:tr>${body.map((b) => cell(b, '<w:i/><w:color w:val="C00000"/>')).join("")}</w:tr></w:tbl></w:sdtContent></w:sdt>`;
};

/** A check box control (Word 2010). */
export const checkbox = (tag: string, id: number) =>
  `<w:sdt><w:sdtPr><w:tag w:val="${tag}"/><w:id w:val="${id}"/><w14:checkbox><w14:checked w14:val="0"/></w14:checkbox></w:sdtPr><w:sdtContent>${run("☐")}</w:sdtContent></w:sdt>`;

/** A paragraph of plain text (in runs) and controls. */
/** A one-row table whose cells hold `cells` (text and controls). */
export const plainTable = (...cells: string[]) =>
  `<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid>${cells.map(() => '<w:gridCol w:w="3000"/>').join("")}</w:tblGrid><w:tr>${cells.map((cell) => `<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>${cell}</w:tc>`).join("")}</w:tr></w:tbl>`;

export const paragraph = (...parts: string[]) => `<w:p>${parts.map((part) => (part.startsWith("<") ? part : run(part))).join("")}</w:p>`;

/**
 * A DOCX of `body` (WordprocessingML of w:body) and, when given, a default
 * header; `images` are media parts the body and header refer to as rIdImage1….
 */
export function templateDocx(body: string, options: { header?: string; footer?: string; images?: Buffer[] } = {}): Buffer {
  const images = options.images ?? [];
  const imageRels = images.map((_, i) => `<Relationship Id="rIdImage${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image${i + 1}.png"/>`).join("");
  const headerRel = options.header ? '<Relationship Id="rIdHeader1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/>' : "";
  const footerRel = options.footer ? '<Relationship Id="rIdFooter1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer" Target="footer1.xml"/>' : "";
  const sectPr = `<w:sectPr>${options.header ? '<w:headerReference w:type="default" r:id="rIdHeader1"/>' : ""}${options.footer ? '<w:footerReference w:type="default" r:id="rIdFooter1"/>' : ""}<w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr>`;
  const parts: Record<string, Uint8Array> = {
    "[Content_Types].xml": strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>${options.header ? '<Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/>' : ""}${options.footer ? '<Override PartName="/word/footer1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"/>' : ""}</Types>`,
    ),
    "_rels/.rels": strToU8(
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ),
    "word/document.xml": strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${NAMESPACES}><w:body>${body}${sectPr}</w:body></w:document>`),
    "word/_rels/document.xml.rels": strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${imageRels}${headerRel}${footerRel}</Relationships>`,
    ),
  };
  if (options.header) parts["word/header1.xml"] = strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:hdr ${NAMESPACES}>${options.header}</w:hdr>`);
  if (options.footer) parts["word/footer1.xml"] = strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:ftr ${NAMESPACES}>${options.footer}</w:ftr>`);
  images.forEach((image, i) => (parts[`word/media/image${i + 1}.png`] = new Uint8Array(image)));
  return Buffer.from(zipSync(parts));
}

/**
 * A contract template: a customer name (inline, tagged), terms (a paragraph),
 * a place titled "place" in the body and the header, a signature picture, an
 * items table and a check box.
 */
export function contractTemplate(): Buffer {
  return templateDocx(
    [
      paragraph("Customer: ", inlineText("customer", "Click to enter the name", 1, "", "<w:b/>")),
      blockText("terms", "Terms go here", 2),
      paragraph("Signed in ", inlineText("", "city", 3, "place")),
      picture("signature", "rIdImage1", 4),
      tableControl("items", 5, ["Item", "Amount"], ["Consulting", "1200"]),
      paragraph(checkbox("agreed", 6)),
    ].join(""),
    { header: paragraph("Office: ", inlineText("", "city", 7, "place")), images: [solidPng(4, 4, [200, 200, 200])] },
  );
}
