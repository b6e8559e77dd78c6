/**
 * Keeps an archived signed PDF verifiable (the renewal of PAdES B-LTA):
 * appends fresh validation data for every signature's chain and for every
 * timestamp's TSA chain (signature timestamps and document timestamps), then
 * a new document timestamp over all of it. Run before the last document
 * timestamp's certificate expires; each run extends the proof by the new
 * timestamp certificate's lifetime. Fails closed like B-LT signing: no
 * revocation data or no timestamp, no document.
 */
import { PDFHexString, PDFName, PDFString } from "pdf-lib";
import { ServiceError } from "../../core/errors.js";
import { readDocumentForm } from "../pdf/document-form.js";
import { openSignablePdf } from "../pdf/pdf-signer.js";
import type { PdfFile } from "../pdf/pdf-file.js";
import { PdfOutput } from "../pdf/pdf-output.js";
import { addDocumentTimestamp, addValidationData, certificateChainOf } from "./long-term-validation.js";
import type { RevocationSource } from "./revocation.js";
import { signatureTimestampToken } from "./signature-assessment.js";
import { timestampingNotConfigured, type TimestampAuthority } from "./timestamp-authority.js";

/**
 * `options.ownsPdf`: the caller hands `pdf`'s ArrayBuffer over; when resizable, the revisions are appended in it ({@link PdfOutput.appendingTo}).
 * Without `services.timestampAuthority`, NOT_CONFIGURED once the document has been read and found extensible.
 */
export async function extendArchive(
  pdf: Buffer,
  services: { timestampAuthority?: Pick<TimestampAuthority, "requestTimestampTokenForDigest">; revocation: Pick<RevocationSource, "collect"> },
  options: { ownsPdf?: boolean } = {},
): Promise<Buffer> {
  const output = options.ownsPdf ? PdfOutput.appendingTo(pdf) : new PdfOutput(pdf);
  const file = openSignablePdf(output.bytes);
  const signatures = signatureContents(file);
  if (signatures.length === 0) throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The PDF has no signature or timestamp to extend.");
  const chains: Buffer[][] = [];
  for (const cms of signatures) {
    try {
      chains.push(certificateChainOf(cms));
      const token = signatureTimestampToken(cms);
      if (token) chains.push(certificateChainOf(token));
    } catch (error) {
      throw new ServiceError("UNPROCESSABLE_DOCUMENT", `A signature of the PDF cannot be read: ${(error as Error).message}`, { cause: error });
    }
  }
  if (!services.timestampAuthority) throw timestampingNotConfigured("Extending a signed document");
  const data = await services.revocation.collect(chains);
  addValidationData(output, data);
  await addDocumentTimestamp(output, services.timestampAuthority);
  return output.bytes;
}

/** The DER CMS of every signed signature field (signatures and document timestamps), in field order. */
function signatureContents(file: PdfFile): Buffer[] {
  return readDocumentForm(file).signatureValues.flatMap((value) => {
    const contents = file.resolveDict(value)?.get(PDFName.of("Contents"));
    if (!(contents instanceof PDFHexString || contents instanceof PDFString)) return [];
    const bytes = Buffer.from(contents.asBytes());
    return bytes.length > 0 ? [bytes] : [];
  });
}
