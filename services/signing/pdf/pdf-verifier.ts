/**
 * Verifies the signatures of a PDF (for `POST /v1/verify`): every signature
 * dictionary's /ByteRange and /Contents, the CMS SignedData in /Contents
 * (messageDigest, signature over the signed attributes, signer certificate),
 * whether the last signature covers the whole file, whether later revisions
 * make only permitted changes, optionally whether the signer certificates
 * chain up to given trusted roots, and each signature's PAdES assessment.
 *
 * The jobs live apart: signature-dictionaries.ts finds the signatures,
 * signature-entry-check.ts checks each one (with verification/: the CMS, the
 * certificate chain), ltv/signature-assessment.ts assesses it, and
 * verification/verdict.ts judges the document.
 */
import { X509Certificate, createHash } from "node:crypto";
import { PDFDocument, PDFName } from "pdf-lib";
import { ServiceError } from "../../core/errors.js";
import { isPdf } from "../../core/file-signature.js";
import type { RevocationSource } from "../ltv/revocation.js";
import { assessSignature, type DocumentValidationData, type SignatureAssessment } from "../ltv/signature-assessment.js";
import { readTrustedRoots } from "../verification/certificate-chain.js";
import { safe } from "../verification/safe.js";
import { verdict } from "../verification/verdict.js";
import type { PdfVerification, SignatureReport } from "../verification/verification-result.js";
import type { PdfFile } from "./pdf-file.js";
import { openReadablePdf, unreadablePdf } from "./readable-pdf.js";
import { changesAfter } from "./revisions.js";
import { checkSignatureEntry } from "./signature-entry-check.js";
import { byteRangeEnd, findSignatures } from "./signature-dictionaries.js";
import { revisionEndingAt } from "./signed-byte-range.js";

export type { PdfVerification } from "../verification/verification-result.js";

export interface PdfVerifyOptions {
  /** DER certificates of trusted roots; when given, every signer must chain up to one of them. */
  trustedRootsDer?: Buffer[];
  /** Where revocation data the document lacks is fetched (as EU DSS does online); unset: not fetched. */
  revocation?: Pick<RevocationSource, "statusOf">;
}

/**
 * Verifies every signature of `pdf`. A PDF without signatures is not valid
 * (reason "The document has no signature."). Throws {@link ServiceError}
 * UNPROCESSABLE_DOCUMENT for bytes that are not a readable PDF (as signing
 * reads it: {@link openReadablePdf}) or are encrypted.
 */
export async function verifyPdfSignatures(pdf: Buffer, options: PdfVerifyOptions = {}): Promise<PdfVerification> {
  const { file, document, pages } = await loadDocument(pdf);
  const sha256 = createHash("sha256").update(pdf).digest("hex");
  const summary = { sha256, pages };
  const roots = readTrustedRoots(options.trustedRootsDer);

  const entries = findSignatures(pdf, document);
  if (entries.length === 0) {
    return { valid: false, reason: "The document has no signature.", signers: [], document: summary };
  }

  const dss = safe(() => documentValidationData(file), undefined) ?? { certificates: [], ocspResponses: [], crls: [] };
  // the DSS may hold intermediates a signature does not carry
  const dssCertificates = dss.certificates.flatMap((der) => safe(() => [new X509Certificate(der)], []));
  const checked = entries.map((entry) => checkSignatureEntry(pdf, entry, roots, dssCertificates));
  const signers: SignatureReport[] = [];
  for (const [index, { report, contents, signerDer, hashFailure }] of checked.entries()) {
    const end = byteRangeEnd(entries[index]!.byteRange);
    const changes = safe(() => changesAfter(file, end), { permitted: false, problem: "the revisions after it cannot be read" });
    report.revision = revisionEndingAt(pdf, end);
    report.laterChangesPermitted = changes.permitted;
    if (!changes.permitted && !report.problem) report.problem = `a later revision changed the document in a way that is not permitted: ${changes.problem}`;
    const laterDocumentTimestamp = checked.some(
      (other, otherIndex) => other.report.kind === "document-timestamp" && other.report.intact && byteRangeEnd(entries[otherIndex]!.byteRange) > end,
    );
    const assessment = contents
      ? await assessSignature(
          {
            kind: report.kind,
            cmsDer: contents,
            signerDer,
            intact: report.intact,
            hashFailure,
            trusted: roots === undefined ? undefined : report.intact && report.problem !== "not trusted",
            laterChangesPermitted: changes.permitted,
            laterDocumentTimestamp,
          },
          dss,
          options.trustedRootsDer ?? [],
          options.revocation,
        ).catch((error: unknown) => unreadableAssessment(error))
      : unreadableAssessment(new Error(report.problem ?? "unreadable"));
    signers.push({ ...report, ...assessment });
  }
  return { ...verdict(signers), signers, document: summary };
}

function unreadableAssessment(error: unknown): SignatureAssessment {
  return {
    level: "",
    indication: "TOTAL-FAILED",
    subIndication: "FORMAT_FAILURE",
    timestampTime: "",
    timestampAuthority: "",
    revocation: `not checked (${(error as Error).message})`,
  };
}

/** The document security store's certificates, OCSP responses and CRLs. */
function documentValidationData(file: PdfFile): DocumentValidationData {
  const dss = file.resolveDict(file.catalog().get(PDFName.of("DSS")));
  const streams = (key: string) =>
    (file.resolveArray(dss?.get(PDFName.of(key)))?.asArray() ?? []).flatMap((item) => {
      const data = safe(() => file.streamData(item), undefined);
      return data ? [data] : [];
    });
  return { certificates: streams("Certs"), ocspResponses: streams("OCSPs"), crls: streams("CRLs") };
}

/**
 * The document as both readers see it: the lazy reader signing uses (which
 * refuses a file with no trailer /Root, where pdf-lib would guess a catalog,
 * and an encrypted one) and pdf-lib's full parse.
 */
async function loadDocument(pdf: Buffer): Promise<{ file: PdfFile; document: PDFDocument; pages: number }> {
  if (!isPdf(pdf)) {
    throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The document is not a PDF.");
  }
  const file = openReadablePdf(pdf, "verifying");
  try {
    const document = await PDFDocument.load(pdf, { ignoreEncryption: true, updateMetadata: false });
    // a file without a page tree fails here (pdf-lib loads almost anything)
    return { file, document, pages: document.getPageCount() };
  } catch (error) {
    throw unreadablePdf(error);
  }
}
