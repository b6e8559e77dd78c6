/**
 * What a standard validator says about one signature of a PDF, beyond its
 * cryptographic integrity: the PAdES baseline level it reaches, its timestamp,
 * the revocation status of its chain (from the document's DSS, else fetched
 * like EU DSS does online), and an ETSI EN 319 102-1 style indication.
 *
 * Indications (simplified from EN 319 102-1, section 5.1.3):
 *   TOTAL-FAILED    HASH_FAILURE (the bytes changed), SIG_CRYPTO_FAILURE, or
 *                   FORMAT_FAILURE (later revisions made changes that are not permitted)
 *   INDETERMINATE   NO_CERTIFICATE_CHAIN_FOUND (no configured trust anchor is reached,
 *                   or none is configured), REVOKED_NO_POE (revoked, and no timestamp
 *                   proves the signature existed before), TRY_LATER (no revocation data)
 *   TOTAL-PASSED
 */
import { OID, children, fromDerPrefix, timeValue, toDer } from "../cms/asn1.js";
import type { SignatureLevel } from "../model.js";
import { safe } from "../verification/safe.js";
import { readSignedData, type SignedData } from "../verification/signed-data.js";
import { isSelfIssued, issues, parseCertificate, type Certificate } from "./certificate.js";
import { crlStatus } from "./crl.js";
import { commonNameOf } from "./distinguished-name.js";
import { ocspStatus } from "./ocsp-response.js";
import type { RevocationSource } from "./revocation.js";
import type { RevocationStatus } from "./revocation-status.js";

export type Indication = "TOTAL-PASSED" | "INDETERMINATE" | "TOTAL-FAILED";

export interface SignatureAssessment {
  level: SignatureLevel | "";
  indication: Indication;
  subIndication: string;
  /** The signature timestamp (a document timestamp's own time), ISO 8601, "" without one. */
  timestampTime: string;
  /** The TSA's name, "" without a timestamp. */
  timestampAuthority: string;
  /** "good (OCSP, embedded)", "revoked (CRL, fetched) since …", "unknown: …", "not checked". */
  revocation: string;
}

export interface SignatureFacts {
  kind: "signature" | "document-timestamp";
  /** The CMS in /Contents. */
  cmsDer: Buffer;
  signerDer: Buffer | undefined;
  intact: boolean;
  /** Set when not intact: the digest no longer matches (else the signature itself failed). */
  hashFailure: boolean;
  /** Undefined when no trust anchors are configured. */
  trusted: boolean | undefined;
  laterChangesPermitted: boolean;
  /** A later document timestamp is intact (the archive timestamp of B-LTA). */
  laterDocumentTimestamp: boolean;
}

export interface DocumentValidationData {
  certificates: Buffer[];
  ocspResponses: Buffer[];
  crls: Buffer[];
}


export async function assessSignature(
  facts: SignatureFacts,
  dss: DocumentValidationData,
  anchorsDer: Buffer[],
  online: Pick<RevocationSource, "statusOf"> | undefined,
): Promise<SignatureAssessment> {
  const signed = readSignedData(facts.cmsDer);
  const token = facts.kind === "document-timestamp" ? facts.cmsDer : signatureTimestampToken(signed);
  const timestamp = token ? readTimestamp(token) : undefined;
  const result: SignatureAssessment & { statuses?: ChainStatus[] } = {
    level: "",
    indication: "TOTAL-PASSED",
    subIndication: "",
    timestampTime: timestamp?.time.toISOString() ?? "",
    timestampAuthority: timestamp?.authority ?? "",
    revocation: "not checked",
  };
  if (facts.kind === "signature" && facts.signerDer) {
    const embedded = [...certificatesOf(signed), ...dss.certificates];
    const chain = chainOf(parseCertificate(facts.signerDer), [...embedded, ...anchorsDer].map(parseCertificate));
    // only a chain that reaches a trust anchor is worth a fetch: a PDF must not make us call URLs of its own choosing
    const statuses = await chainStatus(chain, dss, facts.trusted === true ? online : undefined);
    const inDss = dss.certificates.some((der) => der.equals(facts.signerDer!));
    const longTerm = statuses.length > 0 ? statuses.every((status) => status.embedded) : inDss;
    result.level = !token ? "B-B" : !longTerm ? "B-T" : facts.laterDocumentTimestamp ? "B-LTA" : "B-LT";
    result.revocation =
      statuses.map((status) => status.text).join("; ") || (facts.trusted ? "not needed (the signer is a trust anchor)" : "not checked (a self-signed certificate)");
    result.statuses = statuses;
  }
  return judgeIndication(result, facts, timestamp?.time);
}

/** The indication, in EN 319 102-1's order: integrity, format, trust, revocation. */
function judgeIndication(assessment: SignatureAssessment & { statuses?: ChainStatus[] }, facts: SignatureFacts, timestampTime: Date | undefined): SignatureAssessment {
  const { statuses, ...result } = assessment;
  if (!facts.intact) return { ...result, indication: "TOTAL-FAILED", subIndication: facts.hashFailure ? "HASH_FAILURE" : "SIG_CRYPTO_FAILURE" };
  if (!facts.laterChangesPermitted) return { ...result, indication: "TOTAL-FAILED", subIndication: "FORMAT_FAILURE" };
  if (facts.trusted !== true) return { ...result, indication: "INDETERMINATE", subIndication: "NO_CERTIFICATE_CHAIN_FOUND" };
  const revoked = statuses?.find((status) => status.status?.revokedAt !== undefined);
  if (revoked) {
    const provenBefore = timestampTime !== undefined && timestampTime < revoked.status!.revokedAt!;
    if (!provenBefore) return { ...result, indication: "INDETERMINATE", subIndication: "REVOKED_NO_POE" };
  } else if (statuses?.some((status) => !status.status)) {
    return { ...result, indication: "INDETERMINATE", subIndication: "TRY_LATER" };
  }
  return result;
}

/** The RFC 3161 token in a CMS signature's unsigned attributes (PAdES B-T), if any. */
export function signatureTimestampToken(cms: Buffer | SignedData): Buffer | undefined {
  const signed = Buffer.isBuffer(cms) ? readSignedData(cms) : cms;
  const value = signed.unsignedAttributes.get(OID.signatureTimeStampToken)?.[0];
  return value ? toDer(value) : undefined;
}

/** The token's genTime (TSTInfo: version, policy, messageImprint, serialNumber, genTime, ...) and its TSA's name. */
function readTimestamp(tokenDer: Buffer): { time: Date; authority: string } | undefined {
  return safe(() => {
    const signed = readSignedData(tokenDer);
    if (!signed.eContent) return undefined;
    const genTime = children(fromDerPrefix(signed.eContent, "TSTInfo"), "TSTInfo")[4];
    const tsa = certificatesOf(signed).map(parseCertificate).find((certificate) => !isSelfIssued(certificate));
    return { time: timeValue(genTime, "genTime"), authority: tsa ? commonName(tsa) : "" };
  }, undefined);
}

function certificatesOf(signed: SignedData): Buffer[] {
  return signed.certificates.map((certificate) => certificate.raw);
}

/** `leaf` and its issuers from `pool`, up to a self-issued certificate. */
function chainOf(leaf: Certificate, pool: Certificate[]): Certificate[] {
  const chain = [leaf];
  while (chain.length < 10 && !isSelfIssued(chain.at(-1)!)) {
    const issuer = pool.find((candidate) => issues(candidate, chain.at(-1)!));
    if (!issuer) break;
    chain.push(issuer);
  }
  return chain;
}

interface ChainStatus {
  status: RevocationStatus | undefined;
  embedded: boolean;
  text: string;
}

/** The status of every certificate of `chain` below its root: from the DSS when it has an answer, else fetched. */
async function chainStatus(chain: Certificate[], dss: DocumentValidationData, online: Pick<RevocationSource, "statusOf"> | undefined): Promise<ChainStatus[]> {
  const statuses: ChainStatus[] = [];
  for (let i = 0; i + 1 < chain.length; i++) {
    const [certificate, issuer] = [chain[i]!, chain[i + 1]!];
    const name = commonName(certificate);
    const embedded = embeddedStatus(certificate, issuer, dss);
    if (embedded) {
      statuses.push({ status: embedded, embedded: true, text: `${name}: ${describe(embedded, "embedded")}` });
      continue;
    }
    if (!online) {
      statuses.push({ status: undefined, embedded: false, text: `${name}: unknown (no revocation data in the document)` });
      continue;
    }
    try {
      const fetched = await online.statusOf(certificate, issuer);
      statuses.push({ status: fetched, embedded: false, text: `${name}: ${describe(fetched, "fetched")}` });
    } catch (error) {
      statuses.push({ status: undefined, embedded: false, text: `${name}: unknown (${(error as Error).message})` });
    }
  }
  return statuses;
}

function embeddedStatus(certificate: Certificate, issuer: Certificate, dss: DocumentValidationData): RevocationStatus | undefined {
  for (const bytes of dss.ocspResponses) {
    const status = safe(() => ocspStatus(bytes, certificate, issuer), undefined);
    if (status) return status;
  }
  for (const bytes of dss.crls) {
    const status = safe(() => crlStatus(bytes, certificate, issuer), undefined);
    if (status) return status;
  }
  return undefined;
}

function describe(status: RevocationStatus, where: string): string {
  return status.revokedAt ? `revoked (${status.source}, ${where}) since ${status.revokedAt.toISOString()}` : `good (${status.source}, ${where})`;
}

function commonName(certificate: Certificate): string {
  return commonNameOf(certificate.subject) ?? "certificate";
}
