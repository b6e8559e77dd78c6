/**
 * The two answers made from a {@link PdfVerification}: the gRPC
 * SigningServiceVerifyResponse, and the JSON of `POST /v1/verify`, which the
 * gateway reads back from that response.
 */
import type { SigningServiceVerifyResponse } from "../../../gen/ts-proto/docservice/v1/signing.js";
import type { PdfVerification, SignatureReport } from "./verification-result.js";

/** The gRPC answer (proto3 strings have no "absent": no problem is ""). */
export function verifyResponse(result: PdfVerification): SigningServiceVerifyResponse {
  return {
    valid: result.valid,
    reason: result.reason,
    signers: result.signers.map((signer) => ({ ...signer, problem: signer.problem ?? "" })),
    document: result.document,
  };
}

/**
 * The verification a gRPC answer carries, as `/v1/verify` answers it: the
 * fields in this order, `problem` last and only when there is one. The enum
 * fields are plain strings in the proto; the signing service only sends the
 * values a {@link PdfVerification} allows.
 */
export function verificationOf(response: SigningServiceVerifyResponse): PdfVerification {
  return {
    valid: response.valid,
    reason: response.reason,
    signers: response.signers.map((signer) => ({
      name: signer.name,
      email: signer.email,
      signedAt: signer.signedAt,
      certificateFingerprint: signer.certificateFingerprint,
      subFilter: signer.subFilter,
      coversWholeDocument: signer.coversWholeDocument,
      timestamped: signer.timestamped,
      intact: signer.intact,
      kind: signer.kind as SignatureReport["kind"],
      revision: signer.revision,
      laterChangesPermitted: signer.laterChangesPermitted,
      level: signer.level as SignatureReport["level"],
      indication: signer.indication as SignatureReport["indication"],
      subIndication: signer.subIndication,
      timestampTime: signer.timestampTime,
      timestampAuthority: signer.timestampAuthority,
      revocation: signer.revocation,
      ...(signer.problem ? { problem: signer.problem } : {}),
    })),
    document: { sha256: response.document?.sha256 ?? "", pages: response.document?.pages ?? 0 },
  };
}
