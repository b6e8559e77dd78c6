import { signRequestSchema, verifyRequestSchema } from "./request/sign-request-schema.js";
import { signMessageFromJson } from "./request/sign-message-from-json.js";
import { readJsonBodyWithBytes } from "../request-body/json-body.js";
import type { SigningApi } from "./signing-service.js";
import { documentReply, documentReplySchema, documentSource, jsonSchema, parsedBody } from "../request-body/document-body.js";
import type { Route } from "../contracts/route.js";
import { verificationOf } from "./verification/verification-answers.js";
import { pdfVerificationSchema } from "./verification/verification-result.js";

export interface SignRouteLimits {
  maxDocumentBytes: number;
  metadataMaxBytes: number;
  /** Of a sign, verify or timestamp request's body (services/core/message-limits.ts). */
  maxBodyBytes: number;
}

const documentResponseSchema = documentReplySchema("The signed PDF.", ["application/pdf"]);

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
      // The JSON becomes the message here; SigningService checks it, once, whether it runs in this process or behind gRPC.
      async handle(context) {
        const body = await readJsonBodyWithBytes(context.request, maxBodyBytes, ["document", "base64"]);
        const response = await signing.sign(signMessageFromJson({ value: body.value, content: body.bytes }, signSchema, context.principal!.keyId));
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
      responseSchema: pdfVerificationSchema,
      errors: { 400: "The request breaks a rule; see `details`.", ...documentErrors, 503: "Every verifier is busy; see Retry-After." },
      async handle(context) {
        const body = await parsedBody(context, verifyRequestSchema, maxBodyBytes);
        const result = await signing.verify({ document: documentSource(body) });
        return { status: 200, body: verificationOf(result) };
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
