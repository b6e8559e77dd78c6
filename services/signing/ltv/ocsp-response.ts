/**
 * Reads a DER OCSPResponse (RFC 6960 4.2.1) about one certificate: it must be
 * a successful basic response, signed by the certificate's issuer or a
 * responder it delegated to ({@link checkResponder}), with a SingleResponse
 * whose CertID names the certificate, good or revoked.
 */
import forge from "node-forge";
import { OID, children, fromDerPrefix, isContextTag, oidValue, primitiveBytes, timeValue, type Asn1 } from "../cms/asn1.js";
import type { Certificate } from "./certificate.js";
import { readBasicResponse } from "./ocsp-basic-response.js";
import { identifies } from "./ocsp-cert-id.js";
import { checkResponder } from "./ocsp-responder.js";
import type { RevocationStatus } from "./revocation-status.js";

const { Type } = forge.asn1;

const OCSP_STATUS: Record<number, string> = { 1: "malformedRequest", 2: "internalError", 3: "tryLater", 5: "sigRequired", 6: "unauthorized" };

export function ocspStatus(bytes: Buffer, certificate: Certificate, issuer: Certificate): RevocationStatus {
  const [statusNode, responseBytes] = children(fromDerPrefix(bytes, "OCSP response"), "OCSPResponse");
  const status = forge.asn1.derToInteger(primitiveBytes(statusNode, "responseStatus").toString("binary"));
  if (status !== 0) throw new Error(`the responder answered status ${status} (${OCSP_STATUS[status] ?? "unknown"})`);
  const [responseType, response] = isContextTag(responseBytes, 0) ? children(children(responseBytes, "responseBytes")[0], "ResponseBytes") : [];
  if (!responseType || oidValue(responseType, "responseType") !== OID.ocspBasic) throw new Error("the response is not a basic OCSP response");
  const basic = readBasicResponse(primitiveBytes(response, "response"));
  checkResponder(basic, issuer);
  const single = basic.responses.find((candidate) => identifies(candidate.certId, certificate, issuer));
  if (!single) throw new Error("the response is not about this certificate");
  const revoked = isContextTag(single.certStatus, 1);
  if (!revoked && !isContextTag(single.certStatus, 0)) throw new Error("the responder does not know the certificate");
  return {
    source: "OCSP",
    revokedAt: revoked ? (revocationTime(single.certStatus) ?? single.thisUpdate) : undefined,
    thisUpdate: single.thisUpdate,
    nextUpdate: single.nextUpdate,
    responderCertificates: basic.certificates,
  };
}

/** RevokedInfo's revocationTime, when it is there. */
function revocationTime(status: Asn1): Date | undefined {
  const time = Array.isArray(status.value) ? status.value[0] : undefined;
  return time?.type === Type.GENERALIZEDTIME ? timeValue(time, "revocationTime") : undefined;
}
