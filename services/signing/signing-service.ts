import { createHash, randomUUID } from "node:crypto";
import stringify from "safe-stable-stringify";
import type { z } from "zod";
import {
  type AuditEvent as AuditEventMessage,
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
import { ServiceError, validationError, type FieldIssue } from "../core/errors.js";
import { isPdf, isZip } from "../core/file-signature.js";
import type { HealthCheck } from "../core/health.js";
import type { UnaryApi } from "../core/unary-api.js";
import type { ConversionApi } from "../conversion/conversion-service.js";
import { formatByName } from "../conversion/source-format.js";
import { auditEventTypeName, SIGNATURE_LEVELS, type AuditEvent, type AuditEventType, type SignatureLevel, type Signer } from "./model.js";
import { describeCertificate } from "./keys/certificate-description.js";
import { documentBytes, type FetchDocumentOptions } from "../core/document-fetcher.js";
import { isKeyId } from "../keys/api-key.js";
import { auditTrailSchema, eventIdSchema, levelSchema, metadataSchema, signerSchema, signRequestIssues } from "./request/sign-request-schema.js";
import type { SignatureLedger } from "./ledger/signature-ledger.js";
import type { SigningKey } from "./keys/signing-key.js";
import type { SigningWorkers } from "./workers/signing-workers.js";

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

  async sign(request: SignRequest): Promise<SignResponse> {
    const { signer, events, level } = this.checkSignRequest(request);
    const received = await this.documentBytes(request.document);
    const documentSha256 = createHash("sha256").update(received).digest("hex");
    const certificatePage = request.certificate?.enabled ?? true;
    const metadataJson = request.metadata === undefined ? undefined : JSON.stringify(request.metadata);
    const fingerprint = createHash("sha256")
      .update(stringify({ documentSha256, signer, events, metadataJson, certificatePage, level }) ?? "")
      .digest("hex");

    const sign = async () => {
      const pdf = await this.asPdf(received);
      return this.deps.workers.sign({
        pdf,
        documentId: request.eventId || randomUUID(),
        documentSha256,
        signer,
        events,
        signedAt: this.now(),
        certificatePage,
        metadataJson,
        level,
      });
    };
    const signed = request.eventId ? await this.signOnce(request.callerKeyId, request.eventId, fingerprint, sign) : await sign();
    return { document: { content: signed, contentType: "application/pdf" } };
  }

  async timestamp(request: TimestampRequest): Promise<TimestampResponse> {
    const pdf = await this.documentBytes(request.document);
    if (!isPdf(pdf)) throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The document is not a PDF.");
    // without a time-stamping authority: NOT_CONFIGURED from the worker, once it has read the document
    return { document: { content: await this.deps.workers.extend(pdf), contentType: "application/pdf" } };
  }

  async verify(request: SigningServiceVerifyRequest): Promise<SigningServiceVerifyResponse> {
    const result = await this.deps.workers.verify(await this.documentBytes(request.document));
    return {
      valid: result.valid,
      reason: result.reason,
      signers: result.signers.map((signer) => ({ ...signer, problem: signer.problem ?? "" })),
      document: result.document,
    };
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

  /**
   * The gateway has checked the JSON already; this catches what a gRPC caller
   * can still get wrong, with the same rules and field names.
   */
  private checkSignRequest(request: SignRequest): { signer: Signer; events: AuditEvent[]; level: SignatureLevel } {
    const issues: FieldIssue[] = [];
    const check = (schema: z.ZodType, value: unknown, field: string) => {
      const result = schema.safeParse(value);
      if (!result.success) issues.push(...signRequestIssues(result.error, field));
    };
    const source = request.document;
    if (!source || (source.content === undefined) === (source.url === undefined)) {
      issues.push({ field: "document", issue: "must have exactly one of base64 or url" });
    }
    const signer = request.signer;
    const signerJson = signer && { email: signer.email, name: signer.name, ip: signer.ip || undefined, userAgent: signer.userAgent || undefined };
    check(signerSchema, signerJson, "signer");
    const eventsJson = request.auditTrail.map(eventJson);
    check(auditTrailSchema, eventsJson, "auditTrail");
    if (request.eventId) check(eventIdSchema, request.eventId, "eventId");
    // Set by the gateway or the gRPC guard, never by the client; part of the ledger's key, so checked all the same.
    if (request.callerKeyId && !isKeyId(request.callerKeyId)) issues.push({ field: "callerKeyId", issue: "must be an API key id (64 hex digits)" });
    if (request.metadata !== undefined) check(metadataSchema(this.deps.settings.metadataMaxBytes), request.metadata, "metadata");
    const level = request.level ? levelSchema.safeParse(request.level).data : this.deps.settings.defaultLevel;
    // a level that needs the time-stamping authority this server lacks: NOT_CONFIGURED from the worker, once it has read the document
    if (!level) issues.push({ field: "level", issue: `must be one of ${SIGNATURE_LEVELS.join(", ")}` });
    if (issues.length > 0) throw validationError(issues);
    return {
      level: level!,
      signer: signerJson!,
      events: eventsJson.map((event) => ({ type: event.type as AuditEventType, timestamp: new Date(event.timestamp!), data: event.data })),
    };
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

function eventJson(event: AuditEventMessage) {
  return {
    type: auditEventTypeName(event.type) ?? "unspecified",
    timestamp: event.timestamp?.toISOString(),
    ...(event.data === undefined ? {} : { data: event.data }),
  };
}
