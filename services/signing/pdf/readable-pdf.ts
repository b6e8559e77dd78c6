import { PDFName } from "pdf-lib";
import { ServiceError } from "../../core/errors.js";
import { PdfFile } from "./pdf-file.js";

/**
 * `pdf`'s structure (cross-reference data and trailer), read for `doing` it
 * ("signing", "verifying"). Throws {@link ServiceError} UNPROCESSABLE_DOCUMENT
 * for a file whose structure cannot be read even by a rebuild (no trailer
 * with /Root: damaged or truncated), and for an encrypted one, whose strings
 * and streams mean nothing without its password.
 */
export function openReadablePdf(pdf: Buffer, doing: string): PdfFile {
  let file: PdfFile;
  try {
    file = PdfFile.open(pdf);
  } catch (error) {
    throw unreadablePdf(error);
  }
  if (file.trailer.has(PDFName.of("Encrypt"))) {
    throw new ServiceError("UNPROCESSABLE_DOCUMENT", `The PDF is encrypted; remove its password protection before ${doing} it.`);
  }
  return file;
}

export function unreadablePdf(error: unknown): ServiceError {
  return new ServiceError("UNPROCESSABLE_DOCUMENT", "The document is not a readable PDF (damaged or truncated).", { cause: error });
}
