/**
 * Whether a basic OCSP response comes from someone entitled to answer for
 * the issuer (RFC 6960 4.2.2.2): a certificate the response carries, matching
 * its responderID, signs it, and is the issuer itself or a responder the
 * issuer delegated to (issued by it, id-kp-OCSPSigning, digitalSignature),
 * for every SingleResponse. As pkijs (which LTV used before) checked it,
 * both certificates must also be valid now, not just when the response was
 * made, and the issuer must be a CA certificate. Unlike pkijs 3.4.3, an
 * issuing CA that is not self-signed may sign its own responses (pkijs
 * compared the CA's issuer with its own subject and refused them).
 */
import { createHash } from "node:crypto";
import { OID } from "../cms/asn1.js";
import { parseCertificate, type Certificate } from "./certificate.js";
import { hasExtendedKeyUsage, isCaCertificate, mayCreateSignatures } from "./certificate-usage.js";
import { sameName } from "./distinguished-name.js";
import { namesIssuer, type CertId } from "./ocsp-cert-id.js";
import type { BasicResponse } from "./ocsp-basic-response.js";
import { signatureVerifies } from "./signed-object.js";

/** Throws, saying why, unless the response is signed by its issuer or a responder the issuer delegated to. */
export function checkResponder(response: BasicResponse, issuer: Certificate, now = new Date()): void {
  const carried = response.certificates.map(parseCertificate);
  if (carried.length === 0) throw new Error("the response carries no certificate of its responder");
  const candidates = carried.filter((certificate) => isResponderId(certificate, response.responderId));
  if (candidates.length === 0) throw new Error("no certificate the response carries matches its responderID");
  const problems: string[] = [];
  for (const candidate of candidates) {
    let signed: boolean;
    try {
      signed = signatureVerifies(response.signed, candidate.subjectPublicKeyInfo);
    } catch (error) {
      problems.push((error as Error).message);
      continue;
    }
    if (!signed) continue;
    const problem = entitlementProblem(candidate, issuer, [issuer, ...carried], response.responses.map((single) => single.certId), now);
    if (!problem) return;
    problems.push(problem);
  }
  throw new Error(problems.length > 0 ? problems.join("; ") : "the response's signature does not verify against the issuer");
}

function isResponderId(certificate: Certificate, responderId: BasicResponse["responderId"]): boolean {
  if ("name" in responderId) return sameName(certificate.subject, responderId.name);
  return createHash("sha1").update(certificate.subjectPublicKey).digest().equals(responderId.keyHash);
}

/** Why `responder` may not answer for `issuer` about `certIds`, or undefined when it may. */
function entitlementProblem(responder: Certificate, issuer: Certificate, pool: Certificate[], certIds: CertId[], now: Date): string | undefined {
  if (!responder.der.equals(issuer.der) && !issuedBy(responder, issuer)) return "the response's signer is neither the issuer nor issued by it";
  for (const certificate of [responder, issuer]) {
    if (certificate.notBefore > now || certificate.notAfter < now) return "the response's signer or the issuer is not valid now";
  }
  if (!isCaCertificate(issuer)) return "the issuer is not a CA certificate";
  const delegated = hasExtendedKeyUsage(responder, OID.ocspSigning) && mayCreateSignatures(responder);
  const entitled = (id: CertId) =>
    namesIssuer(id, responder) || (delegated && pool.some((ca) => namesIssuer(id, ca) && issuedBy(responder, ca)));
  return certIds.every(entitled) ? undefined : "the response's signer is neither the issuer nor a responder it delegated to (id-kp-OCSPSigning)";
}

function issuedBy(certificate: Certificate, ca: Certificate): boolean {
  if (!sameName(certificate.issuer, ca.subject)) return false;
  try {
    return signatureVerifies(certificate.signed, ca.subjectPublicKeyInfo);
  } catch {
    return false;
  }
}
