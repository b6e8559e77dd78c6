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
import { LRUCache } from "lru-cache";
import { ServiceError } from "../../core/errors.js";
import { guardedFetch, type GuardedFetchOptions } from "../../fetch/guarded-fetch.js";
import { OID } from "../cms/asn1.js";
import { isSelfIssued, issues, parseCertificate, type Certificate } from "./certificate.js";
import { accessLocations, crlDistributionPoints } from "./certificate-urls.js";
import { cmsCertificates } from "./cms-certificates.js";
import { crlStatus } from "./crl.js";
import { nameText } from "./distinguished-name.js";
import { ocspRequest } from "./ocsp-cert-id.js";
import { ocspStatus } from "./ocsp-response.js";
import type { RevocationStatus } from "./revocation-status.js";
import { inSpan, SpanKind } from "../../core/tracing.js";

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

const MAX_FETCH_BYTES = 10 * 1024 * 1024;
/** How old an OCSP response without nextUpdate may be. */
const OCSP_WITHOUT_NEXT_UPDATE_MS = 24 * 3600_000;

type Answer = { kind: "ocsp"; der: Buffer; responderCertificates: Buffer[] } | { kind: "crl"; der: Buffer };

export class RevocationSource {
  private readonly cache: LRUCache<string, { bytes: Buffer }>;
  private readonly now: () => Date;
  private readonly known: Certificate[];

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
      for (const certificate of complete) certificates.add(certificate.der);
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
  private async completeChain(chain: Certificate[]): Promise<Certificate[]> {
    const complete = [...chain];
    while (complete.length < 10 && !isSelfIssued(complete.at(-1)!)) {
      const last = complete.at(-1)!;
      const issuer = this.known.find((candidate) => issues(candidate, last)) ?? (await this.fetchIssuer(last));
      if (!issuer) break;
      complete.push(issuer);
    }
    return complete;
  }

  private async fetchIssuer(certificate: Certificate): Promise<Certificate | undefined> {
    const urls = accessLocations(certificate, OID.caIssuers);
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
    throw unavailable(`The issuer of ${nameText(certificate.subject)} could not be fetched: ${reasons.join("; ")}`);
  }

  private async revocationOf(certificate: Certificate, issuer: Certificate): Promise<Answer> {
    const answer = await this.fetchStatus(certificate, issuer);
    const { revokedAt, source } = answer.status;
    if (revokedAt !== undefined) throw unavailable(`The certificate ${nameText(certificate.subject)} is revoked (${source}, since ${revokedAt.toISOString()}).`);
    return answer.answer;
  }

  /**
   * The certificate's current status from its OCSP responder, else its CRL,
   * checked and current. Throws {@link ServiceError} UNAVAILABLE with every
   * reason when neither answers.
   */
  async statusOf(certificate: Certificate, issuer: Certificate): Promise<RevocationStatus> {
    return (await this.fetchStatus(certificate, issuer)).status;
  }

  private async fetchStatus(certificate: Certificate, issuer: Certificate): Promise<{ status: RevocationStatus; answer: Answer }> {
    const reasons: string[] = [];
    for (const url of accessLocations(certificate, OID.ocsp)) {
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
    throw unavailable(`No revocation data for ${nameText(certificate.subject)}: ${reasons.join("; ")}`);
  }

  private async ocsp(url: string, certificate: Certificate, issuer: Certificate): Promise<{ status: RevocationStatus; answer: Answer }> {
    const request = { bytes: ocspRequest(certificate, issuer), contentType: "application/ocsp-request" };
    const bytes = await this.fetch(url, "OCSP responder", "OCSP response", request);
    const status = ocspStatus(bytes, certificate, issuer);
    this.checkCurrent(status.thisUpdate, status.nextUpdate);
    return { status, answer: { kind: "ocsp", der: bytes, responderCertificates: status.responderCertificates } };
  }

  private async crl(url: string, certificate: Certificate, issuer: Certificate): Promise<{ status: RevocationStatus; answer: Answer }> {
    const bytes = await this.fetch(url, "CRL distribution point", "CRL");
    const status = crlStatus(bytes, certificate, issuer);
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
    const fetched = () => guardedFetch(url, {
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
    const bytes = await inSpan(`fetch ${content}`, { kind: SpanKind.CLIENT, attributes: { "server.address": hostOf(url) } }, fetched);
    if (this.options.cacheMs > 0) this.cache.set(key, { bytes });
    return bytes;
  }
}

/** The host a fetch goes to, for its span: never the whole URL, whose path may say more than a trace should. */
function hostOf(url: string): string {
  return URL.parse(url)?.hostname ?? "";
}

function unavailable(message: string): ServiceError {
  return new ServiceError("UNAVAILABLE", message, { retryAfterSeconds: 30 });
}

/** A caIssuers URL answers with one DER certificate or a certs-only PKCS#7 bundle. */
function parseIssuerCertificates(bytes: Buffer): Certificate[] {
  try {
    return [parseCertificate(bytes)];
  } catch {
    return cmsCertificates(bytes).map(parseCertificate);
  }
}

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
