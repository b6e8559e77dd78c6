/**
 * RFC 3161 client for the signature timestamp of PAdES baseline B-T: the
 * TimeStampToken a time-stamping authority (TSA) issues over the hash of the
 * CMS signature value, embedded as the SignerInfo's unsigned attribute
 * id-aa-signatureTimeStampToken (RFC 3161 appendix A, ETSI EN 319 122-1 5.3).
 *
 *   TimeStampReq  { version 1, messageImprint { sha256, SHA-256(signature value) },
 *                   nonce (random, positive, 8 bytes), certReq TRUE }
 *   TimeStampResp { status PKIStatusInfo, timeStampToken ContentInfo OPTIONAL }
 *   TimeStampToken = ContentInfo { id-signedData, SignedData { eContent TSTInfo } }
 *   TSTInfo       { version, policy, messageImprint, serialNumber, genTime,
 *                   accuracy?, ordering?, nonce?, tsa [0]?, extensions [1]? }
 *
 * Transport is HTTP(S) POST (RFC 3161 3.4). Whatever goes wrong with the TSA is
 * a {@link ServiceError} UNAVAILABLE: a document that was asked to be
 * timestamped is never signed without the timestamp.
 *
 * The token's own signature and the TSA's certificate are not checked here:
 * the TSA is the operator's choice, and whether it is trusted is for the
 * validators of the signed document to decide. What is checked is that the
 * token answers this very request (imprint and nonce), so that a confused or
 * replaying TSA cannot get a token over something else embedded.
 */
import { createHash, randomBytes } from "node:crypto";
import forge from "node-forge";
import { ServiceError } from "../../core/errors.js";
import { inSpan, SpanKind } from "../../core/tracing.js";
import {
  OID,
  algorithmIdentifier,
  booleanValue,
  children,
  fromDerExact,
  objectIdentifier,
  octetString,
  sequence,
  set,
  smallInteger,
  toDer,
  unsignedInteger,
  type Asn1,
} from "../cms/asn1.js";

const { asn1 } = forge;
const { Class, Type } = asn1;


/** Default time allowed for one TSA request, connection and reply included. */
export const DEFAULT_TSA_TIMEOUT_MS = 10_000;

/** A TimeStampResp is a few KB; anything far larger is not one. */
const MAX_REPLY_BYTES = 256 * 1024;

/** PKIStatus values whose reply carries a token (RFC 3161 2.4.2). */
const PKI_STATUS_GRANTED = 0;
const PKI_STATUS_GRANTED_WITH_MODS = 1;

const PKI_STATUS_NAMES = ["granted", "grantedWithMods", "rejection", "waiting", "revocationWarning", "revocationNotification"];

/** PKIFailureInfo bit numbers (RFC 3161 2.4.2) and their names. */
const PKI_FAILURE_NAMES: Record<number, string> = {
  0: "badAlg",
  2: "badRequest",
  5: "badDataFormat",
  14: "timeNotAvailable",
  15: "unacceptedPolicy",
  16: "unacceptedExtension",
  17: "addInfoNotAvailable",
  25: "systemFailure",
};

export interface TimestampAuthorityOptions {
  /** The TSA's http: or https: URL. */
  url: string | URL;
  /** Time allowed for one request, reply included (default {@link DEFAULT_TSA_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/**
 * The answer to a request that needs a timestamp on a server without a TSA
 * (SIGNING_TSA_URL unset): NOT_CONFIGURED, not UNAVAILABLE, since asking again
 * will not help. Raised only once the document has been read, so a damaged or
 * encrypted one hears that first.
 */
export function timestampingNotConfigured(what: string, field?: string): ServiceError {
  const problem = `${what} needs a time-stamping authority, and this server has none (SIGNING_TSA_URL is not set)`;
  return new ServiceError("NOT_CONFIGURED", `${problem}.`, { details: field === undefined ? undefined : [{ field, issue: problem }] });
}

/** An RFC 3161 time-stamping authority reached over HTTP(S). */
export class TimestampAuthority {
  readonly url: URL;
  readonly timeoutMs: number;

  constructor(options: TimestampAuthorityOptions) {
    const url = new URL(options.url);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`TimestampAuthority: the TSA URL must be http: or https:, got ${url.protocol}`);
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TSA_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
      throw new RangeError(`TimestampAuthority: timeoutMs must be a positive integer, got ${timeoutMs}`);
    }
    this.url = url;
    this.timeoutMs = timeoutMs;
  }

  /**
   * Returns the DER TimeStampToken the TSA issues over SHA-256 of
   * `signatureValue` (the CMS SignerInfo's signature). Throws
   * {@link ServiceError} UNAVAILABLE when the TSA cannot be reached, times out,
   * answers with an HTTP error or something that is not a reply, refuses the
   * request, or returns a token that does not answer it.
   */
  async requestTimestampToken(signatureValue: Buffer): Promise<Buffer> {
    return this.requestTimestampTokenForDigest(createHash("sha256").update(signatureValue).digest());
  }

  /** A token over data whose SHA-256 is `imprint` (a document timestamp's byte range). */
  async requestTimestampTokenForDigest(imprint: Buffer): Promise<Buffer> {
    // 63 random bits, so the INTEGER is positive and at most 8 bytes long
    // (some TSAs refuse longer nonces).
    const nonceBytes = randomBytes(8);
    nonceBytes[0]! &= 0x7f;
    const nonce = unsignedInteger(nonceBytes);

    const request = toDer(
      sequence([
        smallInteger(1),
        messageImprint(imprint),
        nonce,
        booleanValue(true), // certReq: the token must carry the TSA certificate, which validators need
      ]),
    );
    const reply = await this.post(request);
    return this.tokenFromReply(reply, imprint, toDer(nonce));
  }

  private post(request: Buffer): Promise<Buffer> {
    return inSpan("tsa request", { kind: SpanKind.CLIENT, attributes: { "server.address": this.url.hostname } }, () => this.postOnce(request));
  }

  private async postOnce(request: Buffer): Promise<Buffer> {
    // covers connecting, the headers and (below) reading the body, a second attempt included
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    for (let attempt = 1; ; attempt++) {
      try {
        response = await fetch(this.url, {
          method: "POST",
          headers: { "Content-Type": "application/timestamp-query", Accept: "application/timestamp-reply" },
          body: request,
          signal,
        });
        break;
      } catch (error) {
        // A kept-alive connection the TSA closed while idle fails the request sent on it before any
        // answer; asking again (a new connection) is safe: a timestamp request changes nothing.
        if (attempt === 1 && !signal.aborted && connectionDropped(error)) continue;
        throw this.failure(describeFetchError(error, this.timeoutMs), error);
      }
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw this.failure(`answered HTTP ${response.status}`);
    }
    // RFC 3161 3.4 names application/timestamp-reply; some older TSAs send
    // application/timestamp-response.
    const contentType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (contentType !== "application/timestamp-reply" && contentType !== "application/timestamp-response") {
      await response.body?.cancel().catch(() => undefined);
      throw this.failure(`answered with Content-Type "${contentType}" instead of application/timestamp-reply`);
    }
    let body: Buffer | undefined;
    try {
      body = await readLimited(response, MAX_REPLY_BYTES);
    } catch (error) {
      throw this.failure(describeFetchError(error, this.timeoutMs), error);
    }
    if (!body) throw this.failure(`sent a reply larger than ${MAX_REPLY_BYTES} bytes`);
    return body;
  }

  /** Checks the TimeStampResp and returns its token's DER. */
  private tokenFromReply(reply: Buffer, imprint: Buffer, nonceDer: Buffer): Buffer {
    let token: Asn1 | undefined;
    let refusal: string | undefined;
    let imprintMatches = false;
    let nonceMatches = false;
    try {
      const [statusInfo, tokenNode] = children(fromDerExact(reply, "TimeStampResp"), "TimeStampResp");
      refusal = statusProblem(statusInfo);
      if (!refusal && tokenNode) {
        token = tokenNode;
        // TSTInfo: version, policy, messageImprint, serialNumber, genTime, then
        // optional accuracy (SEQUENCE) and ordering (BOOLEAN) before the nonce.
        const [, , imprintNode, , , ...rest] = readTstInfo(tokenNode);
        imprintMatches = isSha256Imprint(imprintNode, imprint);
        const nonceNode = rest.find((node) => node.tagClass === Class.UNIVERSAL && node.type === Type.INTEGER);
        nonceMatches = nonceNode !== undefined && toDer(nonceNode).equals(nonceDer);
      }
    } catch (error) {
      throw this.failure(`sent a malformed reply (${(error as Error).message})`, error);
    }
    if (refusal) throw this.failure(refusal);
    if (!token) throw this.failure("granted the request but sent no timestamp token");
    if (!imprintMatches) {
      throw this.failure("sent a timestamp token over other data than was asked for (messageImprint mismatch)");
    }
    if (!nonceMatches) throw this.failure("sent a timestamp token for another request (nonce mismatch)");
    return toDer(token);
  }

  private failure(what: string, cause?: unknown): ServiceError {
    return new ServiceError("UNAVAILABLE", `The timestamp authority (${this.url.host}) ${what}.`, {
      cause,
    });
  }
}

/**
 * The DER `Attribute` `SEQUENCE { id-aa-signatureTimeStampToken, SET { token } }`
 * for a CMS SignerInfo's unsigned attributes (the
 * `unsignedAttributes` hook of `buildCmsSignature`), from a token of
 * {@link TimestampAuthority.requestTimestampToken}.
 */
export function signatureTimestampAttribute(tokenDer: Buffer): Buffer {
  const token = fromDerExact(tokenDer, "timestamp token");
  return toDer(sequence([objectIdentifier(OID.signatureTimeStampToken), set([token])]));
}

/** MessageImprint { hashAlgorithm sha256 (parameters absent, RFC 5754), hashedMessage }. */
function messageImprint(hash: Buffer): Asn1 {
  return sequence([algorithmIdentifier(OID.sha256), octetString(hash)]);
}

/**
 * Whether a MessageImprint is SHA-256 over `hash`. Compared by value, not by
 * DER: a TSA may write the sha256 AlgorithmIdentifier with NULL parameters
 * although the request had none, which is the same algorithm.
 */
function isSha256Imprint(node: Asn1 | undefined, hash: Buffer): boolean {
  const [algorithm, hashed] = children(node, "messageImprint");
  const [oid] = children(algorithm, "messageImprint hashAlgorithm");
  return (
    oid?.type === Type.OID &&
    asn1.derToOid(String(oid.value)) === OID.sha256 &&
    hashed?.type === Type.OCTETSTRING &&
    Buffer.from(String(hashed.value), "binary").equals(hash)
  );
}

/** Why a PKIStatusInfo does not grant the request, or undefined when it does. */
function statusProblem(statusInfo: Asn1 | undefined): string | undefined {
  const [status, ...more] = children(statusInfo, "PKIStatusInfo");
  if (status?.type !== Type.INTEGER) throw new Error("PKIStatusInfo has no status");
  const value = asn1.derToInteger(String(status.value));
  if (value === PKI_STATUS_GRANTED || value === PKI_STATUS_GRANTED_WITH_MODS) return undefined;

  const texts: string[] = [];
  const failures: string[] = [];
  for (const node of more) {
    if (node.type === Type.SEQUENCE) {
      // statusString: SEQUENCE OF UTF8String
      for (const text of children(node, "statusString")) texts.push(forge.util.decodeUtf8(String(text.value)));
    } else if (node.type === Type.BITSTRING) {
      failures.push(...failureNames(Buffer.from(String(node.value), "binary")));
    }
  }
  const name = PKI_STATUS_NAMES[value] ?? `status ${value}`;
  const failInfo = failures.length > 0 ? ` (${failures.join(", ")})` : "";
  // the caller's message adds the final full stop
  const statusString = texts.length > 0 ? `: ${texts.join(" ").replace(/\.$/, "")}` : "";
  return `refused the request: ${name}${failInfo}${statusString}`;
}

/** Names of the bits set in a PKIFailureInfo BIT STRING (first byte: unused bits). */
function failureNames(bitString: Buffer): string[] {
  const names: string[] = [];
  for (let bit = 0; bit < (bitString.length - 1) * 8; bit++) {
    if (bitString[1 + (bit >> 3)]! & (0x80 >> (bit & 7))) names.push(PKI_FAILURE_NAMES[bit] ?? `failure bit ${bit}`);
  }
  return names;
}

/** The fields of the token's TSTInfo, after checking the token is SignedData over a TSTInfo. */
function readTstInfo(token: Asn1): Asn1[] {
  const [contentType, explicit] = children(token, "TimeStampToken");
  if (contentType?.type !== Type.OID || asn1.derToOid(String(contentType.value)) !== OID.signedData) {
    throw new Error("the timestamp token is not a CMS SignedData");
  }
  const [signedData] = children(explicit, "TimeStampToken content");
  // SignedData: version, digestAlgorithms, encapContentInfo { eContentType, [0] { OCTET STRING } }, ...
  const encap = children(children(signedData, "SignedData")[2], "encapContentInfo");
  const [eContentType, eContent] = encap;
  if (eContentType?.type !== Type.OID || asn1.derToOid(String(eContentType.value)) !== OID.tstInfo) {
    throw new Error("the timestamp token does not hold a TSTInfo");
  }
  const [octets] = children(eContent, "eContent");
  if (octets?.type !== Type.OCTETSTRING || typeof octets.value !== "string") {
    throw new Error("the timestamp token's TSTInfo is not a primitive OCTET STRING");
  }
  return children(fromDerExact(Buffer.from(octets.value, "binary"), "TSTInfo"), "TSTInfo");
}

/** The response body, or undefined when it is larger than `limit` bytes. */
async function readLimited(response: Response, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > limit) {
      await response.body?.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** The connection ended under the request before an answer (undici's "other side closed", a reset). */
function connectionDropped(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
  return code === "UND_ERR_SOCKET" || code === "ECONNRESET" || code === "EPIPE";
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string } | undefined)?.name;
  if (name === "TimeoutError" || name === "AbortError") return `did not answer within ${timeoutMs} ms`;
  // undici's "fetch failed" TypeError carries the socket error as its cause
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error | undefined)?.message ?? String(error);
  return `cannot be reached (${detail})`;
}
