/**
 * The EU Commission's DSS as an independent PAdES validator for the signing
 * tests: `dss-validate` (scripts/testenv/dss.sh, a small Java CLI on DSS's
 * jars, source in scripts/testenv/dss/ValidatePdf.java) run on a file, its
 * JSON report parsed. DSS applies its default validation policy; the given
 * certificates are the only trust anchors. Not a test file itself.
 */
import { cacheBin } from "./cache.js";
import { tool } from "./pdf-tools.js";

/** TOTAL_PASSED, TOTAL_FAILED, INDETERMINATE for signatures; PASSED, FAILED, INDETERMINATE for timestamps and processes. */
export type DssIndication = "TOTAL_PASSED" | "TOTAL_FAILED" | "INDETERMINATE" | "PASSED" | "FAILED" | "NO_SIGNATURE_FOUND";

/** A message of the simple report: `key` names the check (e.g. "BBB_XCV_CCCBB_SIG_ANS"), `text` explains it. */
export interface DssMessage {
  key: string;
  text: string;
}

export interface DssConclusion {
  indication: DssIndication;
  /** e.g. "NO_CERTIFICATE_CHAIN_FOUND", "HASH_FAILURE", "TRY_LATER" */
  subIndication: string | null;
}

/** A PDF object DSS found added, removed or changed after a signed revision. */
export interface DssObjectModification {
  action: "CREATION" | "DELETION" | "MODIFICATION";
  /** The object's path in the document, as DSS prints it. */
  object: string;
  fieldName: string | null;
  type: string | null;
}

/** DSS's comparison of the signed revision with the whole document (pages are 1-based). */
export interface DssModificationDetection {
  detected: boolean;
  annotationsOverlapPages: number[];
  visualDifferencePages: number[];
  pageDifferencePages: number[];
  objectModificationsDetected: boolean;
  extensionChanges: DssObjectModification[];
  signatureOrFormFillChanges: DssObjectModification[];
  annotationChanges: DssObjectModification[];
  undefinedChanges: DssObjectModification[];
}

export interface DssPdfRevision {
  signatureFieldNames: string[];
  /** "ETSI.CAdES.detached", "adbe.pkcs7.detached" */
  subFilter: string | null;
  byteRange: number[];
  byteRangeValid: boolean;
  modificationDetection: DssModificationDetection;
}

export interface DssSignature extends DssConclusion {
  id: string;
  /** The level DSS finds, e.g. "PAdES-BASELINE-B", "PAdES-BASELINE-T", "PAdES-BASELINE-LTA". */
  signatureFormat: string | null;
  /** ISO 8601; the signature dictionary's /M for PAdES. */
  signingTime: string | null;
  /** The earliest proof of existence DSS accepts: a validated signature timestamp, else the validation time. */
  bestSignatureTime: string | null;
  /** The signing certificate's common name. */
  signedBy: string | null;
  errors: DssMessage[];
  warnings: DssMessage[];
  infos: DssMessage[];
  /** Signing certificate first. */
  certificateChain: { id: string; name: string; trusted: boolean }[];
  /** e.g. { name: "Full PDF", scope: "FULL", description: "The document ByteRange : [...]" } */
  signatureScopes: { name: string; scope: string; description: string }[];
  /** The ETSI EN 319 102-1 processes (detailed report) behind the final indication. */
  validationProcesses: { basic: DssConclusion | null; longTerm: DssConclusion | null; archival: DssConclusion | null };
  timestampIds: string[];
  pdfRevision: DssPdfRevision | null;
}

export interface DssTimestamp {
  id: string;
  /** "SIGNATURE_TIMESTAMP", "DOCUMENT_TIMESTAMP", … */
  type: string;
  indication: DssIndication | null;
  subIndication: string | null;
  productionTime: string;
  /** The TSA certificate's common name. */
  producedBy: string | null;
  /** The token's message imprint matches the data it timestamps. */
  messageImprintIntact: boolean;
  errors: DssMessage[];
  warnings: DssMessage[];
}

export interface DssReport {
  validationTime: string;
  validationPolicy: { name: string; description: string } | null;
  signaturesCount: number;
  validSignaturesCount: number;
  signatures: DssSignature[];
  /** Every timestamp in the document, signature timestamps included. */
  timestamps: DssTimestamp[];
  /** What DSS logged on stderr (warnings), for assertion messages. */
  log: string;
}

export interface DssValidateOptions {
  /** PEM (or DER) certificate files; every certificate in them is a trust anchor, and nothing else is. */
  trust: string[];
  /** Let DSS fetch OCSP responses, CRLs and missing issuers (AIA) over the network (default: offline). */
  allowOnline?: boolean;
  /** Validate as of this time instead of now. */
  validationTime?: Date;
}

/** `dss-validate --pdf FILE --trust …`; rejects when DSS cannot validate the file at all (not a PDF, an unreadable certificate). */
export async function validateWithDss(pdfPath: string, options: DssValidateOptions): Promise<DssReport> {
  const args = ["--pdf", pdfPath, ...options.trust.flatMap((file) => ["--trust", file])];
  if (options.allowOnline) args.push("--allow-online");
  if (options.validationTime) args.push("--validation-time", options.validationTime.toISOString());
  const result = await tool(cacheBin("dss-validate"), args);
  if (result.code !== 0) {
    throw new Error(`dss-validate ${args.join(" ")} exited ${result.code}: ${result.stderr.trim()}`);
  }
  return { ...(JSON.parse(result.stdout) as Omit<DssReport, "log">), log: result.stderr };
}
