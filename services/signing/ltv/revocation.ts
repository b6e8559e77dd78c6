/**
 * Collects the validation data of PAdES B-LT: for every certificate of a chain
 * (the signer's, a TSA's), its issuer and fresh revocation data, fetched from
 * the URLs the certificates name (AIA OCSP and caIssuers, CRL distribution
 * points) with the SSRF rules of URL input, a deadline, and a cache.
 *
 * OCSP first, the CRL when there is no OCSP answer. A certificate without any
 * revocation data, or revoked, fails the whole collection (fail closed:
 * ServiceError UNAVAILABLE naming the certificate and every reason); nothing
 * weaker is returned. OCSP responses and CRLs are checked before they are
 * used: signed by the issuer (or, for OCSP, a responder it delegated to with
 * id-kp-OCSPSigning), about this certificate, current.
 */
import { createHash } from "node:crypto";
import * as asn1js from "asn1js";
import { LRUCache } from "lru-cache";
import * as pkijs from "pkijs";
import { ServiceError } from "../../core/errors.js";
import { guardedFetch, type GuardedFetchOptions } from "../../fetch/guarded-fetch.js";

export interface ValidationData {
  /** DER certificates: the chains, their issuers, OCSP responders. No duplicates. */
  certificates: Buffer[];
  /** DER OCSPResponse, as PDF's DSS /OCSPs holds them. */
  ocspResponses: Buffer[];
  /** DER CertificateList. */
  crls: Buffer[];
}

export interface RevocationSourceOptions {
  /** Deadline of one fetch (OCSP, CRL or issuer certificate). */
  timeoutMs: number;
  /** Hosts that may be internal, as for document URLs. */
  allowHosts: string[];
  /** Longest time a fetched answer is reused (0: never). */
  cacheMs: number;
  /** DER certificates that may complete a chain without a fetch (the trust anchors). */
  knownCertificates?: Buffer[];
  now?: () => Date;
}

const OID_AIA = "1.3.6.1.5.5.7.1.1";
const OID_OCSP = "1.3.6.1.5.5.7.48.1";
const OID_CA_ISSUERS = "1.3.6.1.5.5.7.48.2";
const OID_CRL_DISTRIBUTION_POINTS = "2.5.29.31";
const OID_BASIC_OCSP = "1.3.6.1.5.5.7.48.1.1";
const MAX_FETCH_BYTES = 10 * 1024 * 1024;
/** How old an OCSP response without nextUpdate may be. */
const OCSP_WITHOUT_NEXT_UPDATE_MS = 24 * 3600_000;

type Answer = { kind: "ocsp"; der: Buffer; responderCertificates: Buffer[] } | { kind: "crl"; der: Buffer };

export class RevocationSource {
  private readonly cache: LRUCache<string, { bytes: Buffer }>;
  private readonly now: () => Date;
  private readonly known: pkijs.Certificate[];

  constructor(private readonly options: RevocationSourceOptions) {
    this.now = options.now ?? (() => new Date());
    this.known = (options.knownCertificates ?? []).map(parseCertificate);
    this.cache = new LRUCache({ max: 1000, ttl: Math.max(1, options.cacheMs) });
  }

  /**
   * Validation data for `chains` (each leaf first, then issuers in order; a
   * missing issuer is fetched from the caIssuers URL). Roots (self-signed)
   * need no revocation data.
   */
  async collect(chains: Buffer[][]): Promise<ValidationData> {
    const certificates = new DerSet();
    const ocspResponses = new DerSet();
    const crls = new DerSet();
    for (const chain of chains) {
      const complete = await this.completeChain(chain.map(parseCertificate));
      for (const certificate of complete) certificates.add(derOf(certificate));
      for (let i = 0; i + 1 < complete.length; i++) {
        const answer = await this.revocationOf(complete[i]!, complete[i + 1]!);
        if (answer.kind === "ocsp") {
          ocspResponses.add(answer.der);
          for (const der of answer.responderCertificates) certificates.add(der);
        } else {
          crls.add(answer.der);
        }
      }
    }
    return { certificates: certificates.values(), ocspResponses: ocspResponses.values(), crls: crls.values() };
  }

  /**
   * The chain up to a self-signed certificate: the issuer of the last one is
   * taken from the known certificates (trust anchors) or fetched from its
   * caIssuers URL. Without either, the chain ends there.
   */
  private async completeChain(chain: pkijs.Certificate[]): Promise<pkijs.Certificate[]> {
    const complete = [...chain];
    while (complete.length < 10 && !isSelfIssued(complete.at(-1)!)) {
      const last = complete.at(-1)!;
      const issuer = this.known.find((candidate) => issues(candidate, last)) ?? (await this.fetchIssuer(last));
      if (!issuer) break;
      complete.push(issuer);
    }
    return complete;
  }

  private async fetchIssuer(certificate: pkijs.Certificate): Promise<pkijs.Certificate | undefined> {
    const urls = accessLocations(certificate, OID_CA_ISSUERS);
    const reasons: string[] = [];
    for (const url of urls) {
      try {
        const bytes = await this.fetch(url, "issuer certificate", "certificate");
        const issuer = parseIssuerCertificates(bytes).find((candidate) => issues(candidate, certificate));
        if (issuer) return issuer;
        reasons.push(`${url} did not return the issuer`);
      } catch (error) {
        reasons.push((error as Error).message);
      }
    }
    if (urls.length === 0) return undefined;
    throw unavailable(`The issuer of ${subjectOf(certificate)} could not be fetched: ${reasons.join("; ")}`);
  }

  private async revocationOf(certificate: pkijs.Certificate, issuer: pkijs.Certificate): Promise<Answer> {
    const answer = await this.fetchStatus(certificate, issuer);
    const { revokedAt, source } = answer.status;
    if (revokedAt !== undefined) throw unavailable(`The certificate ${subjectOf(certificate)} is revoked (${source}, since ${revokedAt.toISOString()}).`);
    return answer.answer;
  }

  /**
   * The certificate's current status from its OCSP responder, else its CRL,
   * checked and current. Throws {@link ServiceError} UNAVAILABLE with every
   * reason when neither answers.
   */
  async statusOf(certificate: pkijs.Certificate, issuer: pkijs.Certificate): Promise<RevocationStatus> {
    return (await this.fetchStatus(certificate, issuer)).status;
  }

  private async fetchStatus(certificate: pkijs.Certificate, issuer: pkijs.Certificate): Promise<{ status: RevocationStatus; answer: Answer }> {
    const reasons: string[] = [];
    for (const url of accessLocations(certificate, OID_OCSP)) {
      try {
        return await this.ocsp(url, certificate, issuer);
      } catch (error) {
        reasons.push(`OCSP ${url}: ${(error as Error).message}`);
      }
    }
    for (const url of crlDistributionPoints(certificate)) {
      try {
        return await this.crl(url, certificate, issuer);
      } catch (error) {
        reasons.push(`CRL ${url}: ${(error as Error).message}`);
      }
    }
    if (reasons.length === 0) reasons.push("the certificate names no OCSP responder and no CRL");
    throw unavailable(`No revocation data for ${subjectOf(certificate)}: ${reasons.join("; ")}`);
  }

  private async ocsp(url: string, certificate: pkijs.Certificate, issuer: pkijs.Certificate): Promise<{ status: RevocationStatus; answer: Answer }> {
    const request = new pkijs.OCSPRequest();
    await request.createForCertificate(certificate, { hashAlgorithm: "SHA-1", issuerCertificate: issuer });
    const requestDer = Buffer.from(request.toSchema(true).toBER());
    const bytes = await this.fetch(url, "OCSP responder", "OCSP response", { bytes: requestDer, contentType: "application/ocsp-request" });
    const status = await ocspStatus(bytes, certificate, issuer);
    this.checkCurrent(status.thisUpdate, status.nextUpdate);
    return { status, answer: { kind: "ocsp", der: bytes, responderCertificates: status.responderCertificates } };
  }

  private async crl(url: string, certificate: pkijs.Certificate, issuer: pkijs.Certificate): Promise<{ status: RevocationStatus; answer: Answer }> {
    const bytes = await this.fetch(url, "CRL distribution point", "CRL");
    const status = await crlStatus(bytes, certificate, issuer);
    this.checkCurrent(status.thisUpdate, status.nextUpdate);
    return { status, answer: { kind: "crl", der: bytes } };
  }

  private checkCurrent(thisUpdate: Date, nextUpdate: Date | undefined): void {
    const now = this.now().getTime();
    // a few minutes of clock skew between us and the responder
    if (thisUpdate.getTime() > now + 5 * 60_000) throw new Error(`it is dated in the future (${thisUpdate.toISOString()})`);
    const expires = nextUpdate?.getTime() ?? thisUpdate.getTime() + OCSP_WITHOUT_NEXT_UPDATE_MS;
    if (expires < now) throw new Error(`it expired at ${new Date(expires).toISOString()}`);
  }

  private async fetch(url: string, subject: string, content: string, body?: GuardedFetchOptions["body"]): Promise<Buffer> {
    const key = `${url}\n${body ? createHash("sha256").update(body.bytes).digest("hex") : ""}`;
    const cached = this.cache.get(key);
    if (cached) return cached.bytes;
    const bytes = await guardedFetch(url, {
      subject,
      content,
      field: "url",
      failureCode: "UNAVAILABLE",
      maxBytes: MAX_FETCH_BYTES,
      timeoutMs: this.options.timeoutMs,
      maxRedirects: 2,
      allowHosts: this.options.allowHosts,
      body,
    });
    if (this.options.cacheMs > 0) this.cache.set(key, { bytes });
    return bytes;
  }
}

/** What an OCSP response or a CRL says about one certificate; throws when it is not a sound answer about it. */
export interface RevocationStatus {
  source: "OCSP" | "CRL";
  /** Set: revoked at that time. */
  revokedAt?: Date;
  thisUpdate: Date;
  nextUpdate?: Date;
  /** OCSP: the responder's certificates the response carries. */
  responderCertificates: Buffer[];
}

/** Checks a DER OCSPResponse: successful, signed by `issuer` or a responder it delegated to, about `certificate`, good or revoked. */
export async function ocspStatus(bytes: Buffer, certificate: pkijs.Certificate, issuer: pkijs.Certificate): Promise<RevocationStatus> {
  const response = pkijs.OCSPResponse.fromBER(bytes);
  const status = response.responseStatus.valueBlock.valueDec;
  if (status !== 0) throw new Error(`the responder answered status ${status} (${OCSP_STATUS[status] ?? "unknown"})`);
  if (response.responseBytes?.responseType !== OID_BASIC_OCSP) throw new Error("the response is not a basic OCSP response");
  const basic = pkijs.BasicOCSPResponse.fromBER(response.responseBytes.response.valueBlock.valueHexView);
  if (!(await basic.verify({ trustedCerts: [issuer] }))) throw new Error("the response's signature does not verify against the issuer");
  const single = await findSingleResponse(basic, certificate, issuer);
  if (!single) throw new Error("the response is not about this certificate");
  const statusTag = single.certStatus.idBlock.tagNumber;
  if (statusTag !== 0 && statusTag !== 1) throw new Error("the responder does not know the certificate");
  return {
    source: "OCSP",
    revokedAt: statusTag === 1 ? (revocationTime(single.certStatus) ?? single.thisUpdate) : undefined,
    thisUpdate: single.thisUpdate,
    nextUpdate: single.nextUpdate,
    responderCertificates: (basic.certs ?? []).map(derOf),
  };
}

/** Checks a DER CRL: signed by `issuer`; whether it lists `certificate`. */
export async function crlStatus(bytes: Buffer, certificate: pkijs.Certificate, issuer: pkijs.Certificate): Promise<RevocationStatus> {
  const crl = pkijs.CertificateRevocationList.fromBER(bytes);
  if (!crl.issuer.isEqual(issuer.subject)) throw new Error("the CRL is not the issuer's");
  if (!(await crl.verify({ issuerCertificate: issuer }))) throw new Error("the CRL's signature does not verify against the issuer");
  const serial = certificate.serialNumber.valueBlock.valueHexView;
  const entry = crl.revokedCertificates?.find((revoked) => Buffer.from(revoked.userCertificate.valueBlock.valueHexView).equals(serial));
  return { source: "CRL", revokedAt: entry?.revocationDate.value, thisUpdate: crl.thisUpdate.value, nextUpdate: crl.nextUpdate?.value, responderCertificates: [] };
}

const OCSP_STATUS: Record<number, string> = { 1: "malformedRequest", 2: "internalError", 3: "tryLater", 5: "sigRequired", 6: "unauthorized" };

function unavailable(message: string): ServiceError {
  return new ServiceError("UNAVAILABLE", message, { retryAfterSeconds: 30 });
}

async function findSingleResponse(basic: pkijs.BasicOCSPResponse, certificate: pkijs.Certificate, issuer: pkijs.Certificate) {
  for (const single of basic.tbsResponseData.responses) {
    if (await single.certID.isEqual(await certIdOf(certificate, issuer, single.certID.hashAlgorithm.algorithmId))) return single;
  }
  return undefined;
}

async function certIdOf(certificate: pkijs.Certificate, issuer: pkijs.Certificate, hashOid: string): Promise<pkijs.CertID> {
  const id = new pkijs.CertID();
  const hashAlgorithm = hashOid === "1.3.14.3.2.26" ? "SHA-1" : hashOid === "2.16.840.1.101.3.4.2.1" ? "SHA-256" : undefined;
  if (!hashAlgorithm) return id;
  await id.createForCertificate(certificate, { hashAlgorithm, issuerCertificate: issuer });
  return id;
}

function revocationTime(status: asn1js.AsnType): Date | undefined {
  const info = status as asn1js.Constructed;
  const time = info.valueBlock?.value?.[0];
  return time instanceof asn1js.GeneralizedTime ? time.toDate() : undefined;
}

export function parseCertificate(der: Buffer): pkijs.Certificate {
  return pkijs.Certificate.fromBER(der);
}

/** A caIssuers URL answers with one DER certificate or a certs-only PKCS#7 bundle. */
function parseIssuerCertificates(bytes: Buffer): pkijs.Certificate[] {
  try {
    return [pkijs.Certificate.fromBER(bytes)];
  } catch {
    const info = pkijs.ContentInfo.fromBER(bytes);
    const signed = new pkijs.SignedData({ schema: info.content });
    return (signed.certificates ?? []).filter((item): item is pkijs.Certificate => item instanceof pkijs.Certificate);
  }
}

function derOf(certificate: pkijs.Certificate): Buffer {
  return Buffer.from(certificate.toSchema(true).toBER());
}

export function isSelfIssued(certificate: pkijs.Certificate): boolean {
  return certificate.subject.isEqual(certificate.issuer);
}

export function issues(issuer: pkijs.Certificate, certificate: pkijs.Certificate): boolean {
  return issuer.subject.isEqual(certificate.issuer);
}

function subjectOf(certificate: pkijs.Certificate): string {
  return certificate.subject.typesAndValues.map((item) => `${SHORT_NAMES[item.type] ?? item.type}=${item.value.valueBlock.value}`).join(", ");
}

const SHORT_NAMES: Record<string, string> = { "2.5.4.3": "CN", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.6": "C" };

function extension(certificate: pkijs.Certificate, oid: string) {
  return certificate.extensions?.find((item) => item.extnID === oid)?.parsedValue;
}

function accessLocations(certificate: pkijs.Certificate, method: string): string[] {
  const aia = extension(certificate, OID_AIA) as pkijs.InfoAccess | undefined;
  return (aia?.accessDescriptions ?? [])
    .filter((item) => item.accessMethod === method && item.accessLocation.type === 6)
    .map((item) => String(item.accessLocation.value))
    .filter(isHttp);
}

function crlDistributionPoints(certificate: pkijs.Certificate): string[] {
  const points = extension(certificate, OID_CRL_DISTRIBUTION_POINTS) as pkijs.CRLDistributionPoints | undefined;
  return (points?.distributionPoints ?? [])
    .flatMap((point) => (Array.isArray(point.distributionPoint) ? point.distributionPoint : []))
    .filter((name) => name.type === 6)
    .map((name) => String(name.value))
    .filter(isHttp);
}

const isHttp = (url: string) => /^https?:\/\//i.test(url);

/** DER values in first-seen order, each once. */
class DerSet {
  private readonly byHash = new Map<string, Buffer>();
  add(der: Buffer): void {
    const hash = createHash("sha256").update(der).digest("hex");
    if (!this.byHash.has(hash)) this.byHash.set(hash, der);
  }
  values(): Buffer[] {
    return [...this.byHash.values()];
  }
}
