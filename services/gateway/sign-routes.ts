import { type SignRequest } from "../../gen/ts-proto/docservice/v1/signing.js";
import { signRequestSchema, verifyRequestSchema, type SignRequestJson } from "../signing/request/sign-request-schema.js";
import { auditEventTypeMessage } from "../signing/model.js";
import type { SigningApi } from "../signing/signing-service.js";
import { documentReply, documentReplySchema, documentSource, jsonSchema, parsedBody, type ParsedBody } from "./document-body.js";
import type { Route } from "./route.js";

export interface SignRouteLimits {
  maxDocumentBytes: number;
  metadataMaxBytes: number;
  /** Of a sign, verify or timestamp request's body (services/core/message-limits.ts). */
  maxBodyBytes: number;
}

const documentResponseSchema = documentReplySchema("The signed PDF.", ["application/pdf"]);

const verificationSchema = {
  type: "object",
  required: ["valid", "reason", "signers", "document"],
  properties: {
    valid: { type: "boolean", description: "Every signature intact, the last covering the whole file, and trusted when trusted roots are configured." },
    reason: { type: "string" },
    signers: {
      type: "array",
      items: {
        type: "object",
        required: [
          "name", "email", "signedAt", "certificateFingerprint", "subFilter", "coversWholeDocument", "timestamped", "intact",
          "kind", "revision", "laterChangesPermitted", "level", "indication", "subIndication", "timestampTime", "timestampAuthority", "revocation",
        ],
        properties: {
          name: { type: "string" },
          email: { type: "string" },
          signedAt: { type: "string", description: "ISO 8601; empty when the signature claims no time." },
          certificateFingerprint: { type: "string", description: "Hex SHA-256 of the signing certificate." },
          subFilter: { type: "string" },
          coversWholeDocument: { type: "boolean" },
          timestamped: { type: "boolean", description: "Carries an RFC 3161 signature timestamp." },
          intact: { type: "boolean" },
          problem: { type: "string", description: "Why the signature is not valid, when it is not." },
          kind: { type: "string", enum: ["signature", "document-timestamp"] },
          revision: { type: "integer", description: "The revision the signature covers (1 = the document as first saved)." },
          laterChangesPermitted: { type: "boolean", description: "Every later revision makes only permitted changes (signatures, form fields, DSS, document timestamps)." },
          level: { type: "string", enum: ["B-B", "B-T", "B-LT", "B-LTA", ""], description: "PAdES baseline level reached; \"\" for a document timestamp." },
          indication: { type: "string", enum: ["TOTAL-PASSED", "INDETERMINATE", "TOTAL-FAILED"], description: "ETSI EN 319 102-1 style." },
          subIndication: { type: "string", description: "Why, when not TOTAL-PASSED: HASH_FAILURE, SIG_CRYPTO_FAILURE, FORMAT_FAILURE, NO_CERTIFICATE_CHAIN_FOUND, REVOKED_NO_POE, TRY_LATER." },
          timestampTime: { type: "string", description: "ISO 8601 time of the signature timestamp (a document timestamp's own); \"\" without one." },
          timestampAuthority: { type: "string" },
          revocation: { type: "string", description: "The revocation status used for each certificate of the chain, and where it came from." },
        },
      },
    },
    document: { type: "object", required: ["sha256", "pages"], properties: { sha256: { type: "string" }, pages: { type: "integer" } } },
  },
};

const verificationKeySchema = {
  type: "object",
  required: ["certificatePem", "chainPem", "publicKeyPem", "sha256Fingerprint", "algorithm", "subject", "issuer", "validity"],
  properties: {
    certificatePem: { type: "string" },
    chainPem: { type: "array", items: { type: "string" }, description: "Certificates above the signing certificate, issuer first." },
    publicKeyPem: { type: "string" },
    sha256Fingerprint: { type: "string", description: "Hex SHA-256 of the certificate, as /v1/verify and the certificate page show it." },
    algorithm: { type: "string", enum: ["RSA-2048", "RSA-3072", "ECDSA-P256"] },
    subject: { type: "string" },
    issuer: { type: "string" },
    validity: {
      type: "object",
      required: ["notBefore", "notAfter"],
      properties: { notBefore: { type: "string", format: "date-time" }, notAfter: { type: "string", format: "date-time" } },
    },
  },
};

function toSignRequest(parsed: ParsedBody<SignRequestJson>, callerKeyId: string): SignRequest {
  const { body } = parsed;
  return {
    document: documentSource(parsed),
    signer: { email: body.signer.email, name: body.signer.name, ip: body.signer.ip ?? "", userAgent: body.signer.userAgent ?? "" },
    auditTrail: body.auditTrail.map((event) => ({ type: auditEventTypeMessage(event.type), timestamp: new Date(event.timestamp), data: event.data })),
    eventId: body.eventId ?? "",
    metadata: body.metadata,
    certificate: body.certificate,
    callerKeyId,
    level: body.level ?? "",
  };
}

const documentErrors = {
  413: "The document (sent or fetched) or the request body is too large.",
  415: "The body is not JSON.",
  422: "The document is not a PDF or DOCX, is damaged or encrypted, is certified against any change, or its URL could not be read (the message says why).",
};

/** /v1/sign, /v1/verify and /v1/verify/key. */
export function signRoutes(signing: SigningApi, limits: SignRouteLimits): Route[] {
  const signSchema = signRequestSchema(limits);
  const { maxBodyBytes } = limits;
  return [
    {
      method: "POST",
      path: "/v1/sign",
      operationId: "sign",
      summary:
        "Sign a PDF or DOCX at a PAdES baseline level (B-B, B-T, B-LT, B-LTA; `level`, default SIGNING_LEVEL) by incremental update: " +
        "a signed PDF is countersigned and its signatures stay valid; a PDF not signed yet gets an audit-trail certificate page first. " +
        "With `eventId`, a repeat of the same request returns the same signed document for 24 hours.",
      requestBody: { contentType: "application/json", schema: jsonSchema(signSchema) },
      successStatus: 200,
      responseSchema: documentResponseSchema,
      errors: {
        400: "The request breaks a rule; `details` lists every problem as {field, issue}.",
        401: "The API key is missing, malformed or revoked.",
        409: "`eventId` was already used with a different request, or the same request is still being signed.",
        ...documentErrors,
        501: "`level` B-T and above need a time-stamping authority, and this server has none (SIGNING_TSA_URL); answered once the document has been read. Do not retry.",
        503: "Every signer is busy, or the key (HSM), the time-stamping authority, the revocation data of B-LT/B-LTA (or the signing certificate is revoked) or the store is unavailable; the message says which; see Retry-After.",
        504: "Converting the DOCX took longer than the limit.",
      },
      async handle(context) {
        const body = await parsedBody(context, signSchema, maxBodyBytes);
        const response = await signing.sign(toSignRequest(body, context.principal!.keyId));
        return documentReply(response.document!.content);
      },
    },
    {
      method: "POST",
      path: "/v1/verify",
      operationId: "verifySignatures",
      summary:
        "Check every signature and document timestamp of a PDF: the CMS and byte ranges, whether later revisions are permitted changes, the PAdES level, " +
        "timestamp, revocation status and an ETSI EN 319 102-1 style indication (trust anchors: SIGNING_TRUST_ANCHORS).",
      requestBody: { contentType: "application/json", schema: jsonSchema(verifyRequestSchema) },
      successStatus: 200,
      responseSchema: verificationSchema,
      errors: { 400: "The request breaks a rule; see `details`.", ...documentErrors, 503: "Every verifier is busy; see Retry-After." },
      async handle(context) {
        const body = await parsedBody(context, verifyRequestSchema, maxBodyBytes);
        const result = await signing.verify({ document: documentSource(body) });
        return {
          status: 200,
          body: {
            valid: result.valid,
            reason: result.reason,
            signers: result.signers.map(({ problem, ...signer }) => ({ ...signer, ...(problem ? { problem } : {}) })),
            document: result.document,
          },
        };
      },
    },
    {
      method: "POST",
      path: "/v1/timestamp",
      operationId: "extendSignatures",
      summary:
        "Extend an archived signed PDF (PAdES B-LTA renewal): fresh validation data (certificates, OCSP responses or CRLs) for every signature " +
        "and timestamp, and a new document timestamp over everything, appended as incremental updates. Run it before the last document " +
        "timestamp's certificate expires.",
      requestBody: { contentType: "application/json", schema: jsonSchema(verifyRequestSchema) },
      successStatus: 200,
      responseSchema: documentResponseSchema,
      errors: {
        400: "The request breaks a rule; see `details`.",
        ...documentErrors,
        501: "This server has no time-stamping authority (SIGNING_TSA_URL), so it extends no document; answered once the document has been read. Do not retry.",
        503: "The time-stamping authority, an OCSP responder or a CRL server could not be reached (the message says which); nothing weaker is returned.",
      },
      async handle(context) {
        const body = await parsedBody(context, verifyRequestSchema, maxBodyBytes);
        const response = await signing.timestamp({ document: documentSource(body) });
        return documentReply(response.document!.content);
      },
    },
    {
      method: "GET",
      path: "/v1/verify/key",
      operationId: "getVerificationKey",
      summary: "The current signing certificate (PEM), its SHA-256 fingerprint, algorithm, validity and subject.",
      successStatus: 200,
      responseSchema: verificationKeySchema,
      errors: { 503: "The signing service is unavailable." },
      async handle() {
        const key = await signing.getVerificationKey({});
        return {
          status: 200,
          body: {
            certificatePem: key.certificatePem,
            chainPem: key.chainPem,
            publicKeyPem: key.publicKeyPem,
            sha256Fingerprint: key.certificateSha256,
            algorithm: key.algorithm,
            subject: key.subject,
            issuer: key.issuer,
            validity: { notBefore: key.notBefore?.toISOString(), notAfter: key.notAfter?.toISOString() },
          },
        };
      },
    },
  ];
}
