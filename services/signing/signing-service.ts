import { createHash, randomUUID } from "node:crypto";
import stringify from "safe-stable-stringify";
import {
  type DocumentSource,
  type GetVerificationKeyResponse,
  type SigningServiceService,
  type SigningServiceVerifyRequest,
  type SigningServiceVerifyResponse,
  type SignRequest,
  type SignResponse,
  type TimestampRequest,
  type TimestampResponse,
} from "../../gen/ts-proto/docservice/v1/signing.js";
import { ServiceError } from "../core/errors.js";
import { isPdf, isZip } from "../core/file-signature.js";
import type { HealthCheck } from "../core/health.js";
import type { UnaryApi } from "../grpc/unary-api.js";
import type { ConversionApi } from "../conversion/conversion-service.js";
import { formatByName } from "../conversion/source-format.js";
import type { SignatureLevel } from "./model.js";
import { describeCertificate } from "./keys/certificate-description.js";
import { documentBytes, type FetchDocumentOptions } from "../fetch/document-fetcher.js";
import type { SignOrder } from "./request/sign-order.js";
import { signOrderFromMessage } from "./request/sign-order-from-message.js";
import type { SignatureLedger } from "./ledger/signature-ledger.js";
import type { SigningKey } from "./keys/signing-key.js";
import type { SigningWorkers } from "./workers/signing-workers.js";
import { verifyResponse } from "./verification/verification-answers.js";
import { countSigned } from "./signing-metrics.js";

export type SigningApi = UnaryApi<typeof SigningServiceService>;

export interface SigningSettings {
  /** Largest document accepted, uploaded or fetched. */
  maxDocumentBytes: number;
  metadataMaxBytes: number;
  /** How long a signed document is kept for replays of its eventId. */
  replayTtlMs: number;
  fetch: Omit<FetchDocumentOptions, "maxBytes">;
  /** The level of a request that names none. */
  defaultLevel: SignatureLevel;
}

export interface SigningServiceDeps {
  key: SigningKey;
  workers: SigningWorkers;
  ledger: SignatureLedger;
  conversion: ConversionApi;
  settings: SigningSettings;
  health: HealthCheck;
  now?: () => Date;
}

/** How long an eventId stays claimed by a request still being signed (then a retry may take it over). */
const CLAIM_MS = 5 * 60_000;

const DOCX = formatByName("docx")!;

/**
 * Signs documents (PAdES B-B, optionally with the audit-trail certificate
 * page) and verifies signed ones. DOCX input is converted to PDF through
 * ConversionService first; the PDF work runs on {@link SigningWorkers}.
 */
export class SigningService implements SigningApi {
  private readonly now: () => Date;

  constructor(private readonly deps: SigningServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** The message is checked and made a {@link SignOrder} once, here; the gateway has only made its JSON into the message. */
  async sign(request: SignRequest): Promise<SignResponse> {
    const order = signOrderFromMessage(request, this.deps.settings);
    const received = await this.documentBytes(order.document);
    const documentSha256 = createHash("sha256").update(received).digest("hex");
    const { signer, events, certificatePage, metadataJson, level, eventId } = order;

    const sign = async () => {
      const pdf = await this.asPdf(received);
      const signed = await this.deps.workers.sign({ pdf, documentId: eventId ?? randomUUID(), documentSha256, signer, events, signedAt: this.now(), certificatePage, metadataJson, level });
      countSigned(level);
      return signed;
    };
    const signed = eventId ? await this.signOnce(order.callerKeyId, eventId, requestFingerprint(order, documentSha256), sign) : await sign();
    return { document: { content: signed, contentType: "application/pdf" } };
  }

  async timestamp(request: TimestampRequest): Promise<TimestampResponse> {
    const pdf = await this.documentBytes(request.document);
    if (!isPdf(pdf)) throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The document is not a PDF.");
    // without a time-stamping authority: NOT_CONFIGURED from the worker, once it has read the document
    return { document: { content: await this.deps.workers.extend(pdf), contentType: "application/pdf" } };
  }

  async verify(request: SigningServiceVerifyRequest): Promise<SigningServiceVerifyResponse> {
    return verifyResponse(await this.deps.workers.verify(await this.documentBytes(request.document)));
  }

  async getVerificationKey(): Promise<GetVerificationKeyResponse> {
    const { key } = this.deps;
    const certificate = describeCertificate(key.certificateDer);
    return {
      certificatePem: certificate.pem,
      chainPem: key.chainDer.map((der) => describeCertificate(der).pem),
      publicKeyPem: certificate.publicKeyPem,
      certificateSha256: certificate.sha256,
      algorithm: key.algorithm,
      subject: certificate.subject,
      issuer: certificate.issuer,
      notBefore: certificate.notBefore,
      notAfter: certificate.notAfter,
    };
  }

  health() {
    return this.deps.health();
  }

  private documentBytes(source: DocumentSource | undefined): Promise<Buffer> {
    const { maxDocumentBytes, fetch } = this.deps.settings;
    return documentBytes(source, { ...fetch, maxBytes: maxDocumentBytes });
  }

  /** A PDF as it is; a DOCX converted; anything else refused. */
  private async asPdf(bytes: Buffer): Promise<Buffer> {
    if (isPdf(bytes)) return bytes;
    if (!isZip(bytes)) throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The document is neither a PDF nor a DOCX.");
    try {
      const converted = await this.deps.conversion.convert({ document: bytes, format: DOCX, filename: "document.docx" });
      return converted.bytes;
    } catch (error) {
      // The converter's "not a DOCX" (415) is, for signing, a document that cannot be signed.
      if (error instanceof ServiceError && error.code === "UNSUPPORTED_MEDIA_TYPE") {
        throw new ServiceError("UNPROCESSABLE_DOCUMENT", `The document cannot be signed: ${error.message}`);
      }
      throw error;
    }
  }

  /** Signs under an eventId: a repeat of the same request gets the stored document; a different request, 409. */
  private async signOnce(scope: string, eventId: string, fingerprint: string, sign: () => Promise<Buffer>): Promise<Buffer> {
    const { ledger, settings } = this.deps;
    const claim = await ledger.claim(scope, eventId, fingerprint, CLAIM_MS);
    if (claim.kind === "replay") return claim.document;
    if (claim.kind === "conflict") {
      throw new ServiceError("CONFLICT", `eventId "${eventId}" was already used with a different request.`, {
        details: [{ field: "eventId", issue: "was already used with a different request" }],
      });
    }
    if (claim.kind === "in-progress") {
      throw new ServiceError("CONFLICT", `A request with eventId "${eventId}" is still being signed; retry shortly.`, { retryAfterSeconds: 1 });
    }
    try {
      const signed = await sign();
      await ledger.complete(scope, eventId, fingerprint, signed, settings.replayTtlMs);
      return signed;
    } catch (error) {
      await ledger.release(scope, eventId, fingerprint).catch(() => {});
      throw error;
    }
  }
}

/**
 * What makes two requests under one eventId the same request: the document
 * as received and everything the order says to write. Stored in the ledger, so
 * its members and their JSON stay as they are across versions.
 */
function requestFingerprint(order: SignOrder, documentSha256: string): string {
  const { signer, events, metadataJson, certificatePage, level } = order;
  return createHash("sha256")
    .update(stringify({ documentSha256, signer, events, metadataJson, certificatePage, level }) ?? "")
    .digest("hex");
}
