/**
 * PAdES B-LT and B-LTA, each an incremental update after the signature:
 * B-LT adds the document security store (/DSS: the certificates, OCSP
 * responses and CRLs of the signer's and the TSA's chains, ETSI EN 319 142-1
 * 5.4.2; no /VRI, which the baseline makes optional); B-LTA then adds a
 * document timestamp (/Type /DocTimeStamp, SubFilter ETSI.RFC3161) over
 * everything before it. Both are permitted changes after any signature.
 */
import { PDFName, PDFRawStream, type PDFObject, type PDFRef } from "pdf-lib";
import { IncrementalUpdate } from "../pdf/incremental-update.js";
import { PdfFile } from "../pdf/pdf-file.js";
import type { PdfOutput } from "../pdf/pdf-output.js";
import { appendSignedRevision } from "../pdf/signed-revision.js";
import { isSelfIssued, issues, parseCertificate, type Certificate } from "./certificate.js";
import { cmsCertificates } from "./cms-certificates.js";
import type { ValidationData } from "./revocation.js";
import type { TimestampAuthority } from "./timestamp-authority.js";

/** Room for a document timestamp token with its TSA's chain. */
const DOCUMENT_TIMESTAMP_RESERVATION_BYTES = 16384;

/** Appends `data` to the document's /DSS (created, or extended without duplicates). */
export function addValidationData(output: PdfOutput, data: ValidationData): void {
  const file = PdfFile.open(output.bytes);
  const update = new IncrementalUpdate(file);
  const catalog = file.catalog().clone(file.context);
  const existing = file.resolveDict(catalog.get(PDFName.of("DSS")));
  const dss = existing ? existing.clone(file.context) : file.context.obj({});
  const extend = (key: string, values: Buffer[]) => {
    const current = file.resolveArray(dss.get(PDFName.of(key)))?.asArray() ?? [];
    const present = new Set(current.map((item) => streamBytes(file, item)?.toString("hex")));
    const added: PDFRef[] = values.filter((der) => !present.has(der.toString("hex"))).map((der) => update.add(PDFRawStream.of(file.context.obj({}), der)));
    if (current.length + added.length > 0) dss.set(PDFName.of(key), file.context.obj([...current, ...added]));
  };
  extend("Certs", data.certificates);
  extend("OCSPs", data.ocspResponses);
  extend("CRLs", data.crls);
  catalog.set(PDFName.of("DSS"), update.add(dss));
  update.set(file.catalogRef, catalog);
  output.append(update.serialize().bytes);
}

/** Appends a document timestamp over everything before it. */
export function addDocumentTimestamp(output: PdfOutput, tsa: Pick<TimestampAuthority, "requestTimestampTokenForDigest">): Promise<void> {
  return appendSignedRevision(output, PdfFile.open(output.bytes), {
    reservation: DOCUMENT_TIMESTAMP_RESERVATION_BYTES,
    dictionary: () => ({ Type: PDFName.of("DocTimeStamp"), Filter: PDFName.of("Adobe.PPKLite"), SubFilter: PDFName.of("ETSI.RFC3161") }),
    contents: (digest) => tsa.requestTimestampTokenForDigest(digest),
  });
}

/** The certificates a CMS (a signature's timestamp token, a document timestamp) carries, leaf first, then issuers in order. */
export function certificateChainOf(cmsDer: Buffer): Buffer[] {
  const certificates = cmsCertificates(cmsDer).map(parseCertificate);
  const issuerOfOther = (candidate: Certificate) =>
    certificates.some((other) => other !== candidate && !isSelfIssued(other) && issues(candidate, other));
  const leaf = certificates.find((candidate) => !issuerOfOther(candidate)) ?? certificates[0];
  const chain: Certificate[] = [];
  for (let current: Certificate | undefined = leaf; current && !chain.includes(current); ) {
    chain.push(current);
    if (isSelfIssued(current)) break;
    const child: Certificate = current;
    current = certificates.find((other) => issues(other, child));
  }
  return chain.map((certificate) => certificate.der);
}

function streamBytes(file: PdfFile, item: PDFObject): Buffer | undefined {
  const stream = file.resolve(item);
  return stream instanceof PDFRawStream && !stream.dict.has(PDFName.of("Filter")) ? Buffer.from(stream.contents) : undefined;
}

