import CFB from "cfb";
import yauzl from "yauzl";
import { ServiceError } from "../core/errors.js";
import { isZip } from "../core/file-signature.js";
import type { FormatSpec } from "./source-format.js";

export interface DocumentLimits {
  /** Largest total uncompressed size of a ZIP-based document's parts. */
  maxUncompressedBytes: number;
  /** Most parts a ZIP-based document may have. */
  maxZipEntries: number;
}

const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const FOREIGN_TYPES: Array<[Buffer, string]> = [
  [Buffer.from("%PDF-"), "a PDF document"],
  [Buffer.from([0x89, 0x50, 0x4e, 0x47]), "a PNG image"],
  [Buffer.from([0xff, 0xd8, 0xff]), "a JPEG image"],
  [Buffer.from("GIF8"), "a GIF image"],
];
const WORD_MAIN_PART = /wordprocessingml\.document\.main\+xml|ms-word\.document\.macroEnabled\.main\+xml|wordprocessingml\.template\.main\+xml/;
const ODT_MIMETYPE = "application/vnd.oasis.opendocument.text";

const unprocessable = (message: string) => new ServiceError("UNPROCESSABLE_DOCUMENT", message);
const wrongType = (message: string) => new ServiceError("UNSUPPORTED_MEDIA_TYPE", message);

/**
 * Checks that the bytes really are a document of the declared format, and
 * safe to hand to LibreOffice: not another type, not encrypted, not
 * truncated, not a ZIP bomb. Throws a ServiceError saying which.
 */
export async function checkDocument(bytes: Buffer, format: FormatSpec, limits: DocumentLimits): Promise<void> {
  if (bytes.length === 0) throw new ServiceError("VALIDATION_ERROR", "The file is empty.", { details: [{ field: "file", issue: "is empty" }] });
  for (const [magic, what] of FOREIGN_TYPES) {
    if (startsWith(bytes, magic)) throw wrongType(`The file is ${what}, not ${format.label}.`);
  }
  const zip = isZip(bytes);
  const isOle2 = startsWith(bytes, OLE2);
  switch (format.name) {
    case "docx":
      if (isOle2) throw oleInsteadOfDocx(bytes);
      if (!zip) throw wrongType(`The file is not ${format.label}: it is not a ZIP package.`);
      return checkZipDocument(bytes, limits, (parts) => {
        if (parts.get("mimetype")?.trim() === ODT_MIMETYPE) throw wrongType("The file is an OpenDocument text (ODT), not DOCX: send it with from=odt.");
        if (!WORD_MAIN_PART.test(parts.get("[Content_Types].xml") ?? "")) throw unprocessable("The file is a ZIP package but not a Word document: it has no Word main document part.");
      });
    case "odt":
      if (!zip) throw wrongType(`The file is not ${format.label}: it is not a ZIP package.`);
      return checkZipDocument(bytes, limits, (parts) => {
        if (parts.get("mimetype")?.trim() !== ODT_MIMETYPE) throw unprocessable(`The file is a ZIP package but not an OpenDocument text: its mimetype is not ${ODT_MIMETYPE}.`);
      });
    case "doc":
      if (zip) throw wrongType("The file is a ZIP-based document (DOCX or ODT), not a Word 97-2003 document: send it with from=docx or from=odt.");
      if (!isOle2) throw wrongType(`The file is not ${format.label}.`);
      return checkWord97(bytes);
    case "rtf":
      if (!bytes.subarray(0, 5).equals(Buffer.from("{\\rtf"))) throw wrongType("The file is not RTF: it does not start with {\\rtf.");
      return;
    default:
      if (zip || isOle2 || bytes.subarray(0, 8192).includes(0)) throw wrongType(`The file is binary, not ${format.label}.`);
  }
}

function startsWith(bytes: Buffer, magic: Buffer): boolean {
  return bytes.length >= magic.length && bytes.subarray(0, magic.length).equals(magic);
}

/** Encrypted OOXML is stored inside an OLE2 container with an EncryptionInfo stream. */
function oleInsteadOfDocx(bytes: Buffer): ServiceError {
  const container = readCompoundFile(bytes);
  if (CFB.find(container, "EncryptionInfo") && CFB.find(container, "EncryptedPackage")) {
    return unprocessable("The document is encrypted (password-protected); remove the password and try again.");
  }
  return wrongType("The file is a Word 97-2003 (.doc) or other OLE2 document, not DOCX: send it with from=doc.");
}

function checkWord97(bytes: Buffer): void {
  const wordStream = CFB.find(readCompoundFile(bytes), "WordDocument");
  if (!wordStream?.content || wordStream.content.length < 12) throw unprocessable("The file is an OLE2 container but not a Word 97-2003 document.");
  // FIB flags at offset 0x0A; bit 0x0100 is fEncrypted.
  const flags = Buffer.from(wordStream.content as Uint8Array).readUInt16LE(0x0a);
  if (flags & 0x0100) throw unprocessable("The document is encrypted (password-protected); remove the password and try again.");
}

function readCompoundFile(bytes: Buffer): CFB.CFB$Container {
  try {
    return CFB.read(bytes, { type: "buffer" });
  } catch {
    throw unprocessable("The file is a damaged OLE2 container.");
  }
}

/**
 * Reads the ZIP's directory and inflates every part (discarding the output),
 * so both the declared and the actual sizes are checked before LibreOffice
 * sees the file; small parts needed for the type check are kept as text.
 */
async function checkZipDocument(bytes: Buffer, limits: DocumentLimits, checkParts: (parts: Map<string, string>) => void): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (error, file) =>
      error ? reject(unprocessable(`The document is damaged or truncated: ${error.message}.`)) : resolve(file),
    ),
  );
  if (zip.entryCount > limits.maxZipEntries) {
    zip.close();
    throw new ServiceError("PAYLOAD_TOO_LARGE", `The document has ${zip.entryCount} parts; at most ${limits.maxZipEntries} are accepted.`);
  }
  const parts = new Map<string, string>();
  let declared = 0;
  await new Promise<void>((resolve, reject) => {
    const fail = (error: ServiceError) => {
      zip.close();
      reject(error);
    };
    zip.on("error", (error: Error) => fail(unprocessable(`The document is damaged or truncated: ${error.message}.`)));
    zip.on("end", () => resolve());
    zip.on("entry", (entry: yauzl.Entry) => {
      declared += entry.uncompressedSize;
      if (declared > limits.maxUncompressedBytes) {
        return fail(new ServiceError("PAYLOAD_TOO_LARGE", `The document unpacks to more than ${limits.maxUncompressedBytes} bytes (a ZIP bomb?); refused.`));
      }
      if (entry.fileName.endsWith("/")) return zip.readEntry();
      zip.openReadStream(entry, (error, stream) => {
        if (error) return fail(unprocessable(`The document is damaged: part ${entry.fileName}: ${error.message}.`));
        const keep = entry.fileName === "[Content_Types].xml" || entry.fileName === "mimetype";
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => keep && chunks.push(chunk));
        stream.on("error", (streamError: Error) => fail(unprocessable(`The document is damaged: part ${entry.fileName}: ${streamError.message}.`)));
        stream.on("end", () => {
          if (keep) parts.set(entry.fileName, Buffer.concat(chunks).toString("utf8"));
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
  checkParts(parts);
}
