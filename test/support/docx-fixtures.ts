import { zipSync, strToU8 } from "fflate";

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Default Extension="bin" ContentType="application/octet-stream"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>`;

const RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>`;

function documentXml(paragraphs: string[]): string {
  const body = paragraphs.map((text) => `<w:p><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`).join("");
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`;
}

/** A minimal valid DOCX whose body is these paragraphs. */
export function makeDocx(paragraphs: string[], extraParts: Record<string, Uint8Array> = {}): Buffer {
  return Buffer.from(
    zipSync({
      "[Content_Types].xml": strToU8(CONTENT_TYPES),
      "_rels/.rels": strToU8(RELS),
      "word/document.xml": strToU8(documentXml(paragraphs)),
      ...extraParts,
    }),
  );
}

/** A DOCX long enough that LibreOffice needs several seconds for it. */
export function slowDocx(paragraphs = 40_000): Buffer {
  const line = "The quick brown fox jumps over the lazy dog while the pool keeps converting documents.";
  return makeDocx(Array.from({ length: paragraphs }, (_, i) => `${i} ${line}`));
}

/** A DOCX carrying a part of `bytes` zeros: tiny on the wire, huge unpacked. */
export function zipBombDocx(bytes: number): Buffer {
  return makeDocx(["bomb"], { "word/media/zeros.bin": new Uint8Array(bytes) });
}
