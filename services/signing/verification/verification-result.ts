/**
 * What checking a PDF's signatures finds: THE verification result. The
 * verifier returns it, a signing worker hands it over as it is, the gRPC
 * answer is made from it and the JSON answer of `POST /v1/verify` is it
 * (verification-answers.ts). It is written once, as the JSON Schema the
 * OpenAPI document publishes; the TypeScript types are read off that schema.
 */
import { SIGNATURE_LEVELS } from "../model.js";
import type { JsonSchemaValue } from "./json-schema-type.js";

const signatureReportSchema = {
  type: "object",
  required: [
    "name", "email", "signedAt", "certificateFingerprint", "subFilter", "coversWholeDocument", "timestamped", "intact",
    "kind", "revision", "laterChangesPermitted", "level", "indication", "subIndication", "timestampTime", "timestampAuthority", "revocation",
  ],
  properties: {
    // from the signature dictionary's /Name, else the certificate's common name
    name: { type: "string" },
    // the certificate's emailAddress or SAN rfc822Name, else a /ContactInfo that looks like one
    email: { type: "string" },
    // from the signature dictionary's /M ("" when absent or unreadable)
    signedAt: { type: "string", description: "ISO 8601; empty when the signature claims no time." },
    // "" when the certificate was not found
    certificateFingerprint: { type: "string", description: "Hex SHA-256 of the signing certificate." },
    subFilter: { type: "string" },
    coversWholeDocument: { type: "boolean" },
    timestamped: { type: "boolean", description: "Carries an RFC 3161 signature timestamp." },
    // the signature matches the bytes its /ByteRange covers and the signer certificate's key
    intact: { type: "boolean" },
    // the first problem found ("not trusted" when the chain check failed); absent when none
    problem: { type: "string", description: "Why the signature is not valid, when it is not." },
    // a document timestamp has SubFilter ETSI.RFC3161
    kind: { type: "string", enum: ["signature", "document-timestamp"] },
    revision: { type: "integer", description: "The revision the signature covers (1 = the document as first saved)." },
    laterChangesPermitted: { type: "boolean", description: "Every later revision makes only permitted changes (signatures, form fields, DSS, document timestamps)." },
    // from here on: ltv/signature-assessment.ts's SignatureAssessment
    level: { type: "string", enum: [...SIGNATURE_LEVELS, ""], description: "PAdES baseline level reached; \"\" for a document timestamp." },
    indication: { type: "string", enum: ["TOTAL-PASSED", "INDETERMINATE", "TOTAL-FAILED"], description: "ETSI EN 319 102-1 style." },
    subIndication: { type: "string", description: "Why, when not TOTAL-PASSED: HASH_FAILURE, SIG_CRYPTO_FAILURE, FORMAT_FAILURE, NO_CERTIFICATE_CHAIN_FOUND, REVOKED_NO_POE, TRY_LATER." },
    timestampTime: { type: "string", description: "ISO 8601 time of the signature timestamp (a document timestamp's own); \"\" without one." },
    timestampAuthority: { type: "string" },
    revocation: { type: "string", description: "The revocation status used for each certificate of the chain, and where it came from." },
  },
} as const;

/** The JSON Schema of a {@link PdfVerification}: the `/v1/verify` answer in the OpenAPI document. */
export const pdfVerificationSchema = {
  type: "object",
  required: ["valid", "reason", "signers", "document"],
  properties: {
    valid: { type: "boolean", description: "Every signature intact, the last covering the whole file, and trusted when trusted roots are configured." },
    reason: { type: "string" },
    // in revision order: the signature whose range ends last is the last one
    signers: { type: "array", items: signatureReportSchema },
    document: { type: "object", required: ["sha256", "pages"], properties: { sha256: { type: "string" }, pages: { type: "integer" } } },
  },
} as const;

export type PdfVerification = JsonSchemaValue<typeof pdfVerificationSchema>;

/** What was found about one signature or document timestamp. */
export type SignatureReport = PdfVerification["signers"][number];

/** The checked file: hex SHA-256 of all its bytes, and its page count. */
export type VerifiedDocumentSummary = PdfVerification["document"];
