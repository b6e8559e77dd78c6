/**
 * The document's verdict from its signatures' reports: the first broken
 * signature, else the first not-permitted later change, else the first
 * untrusted signer, else the first revoked one decides; otherwise valid.
 */
import type { PdfVerification, SignatureReport } from "./verification-result.js";

export function verdict(signers: SignatureReport[]): Pick<PdfVerification, "valid" | "reason"> {
  const broken = signers.findIndex((signer) => !signer.intact);
  if (broken >= 0) {
    return { valid: false, reason: `Signature ${broken + 1} does not match the document: ${signers[broken]!.problem}.` };
  }
  const modified = signers.findIndex((signer) => !signer.laterChangesPermitted);
  if (modified >= 0) {
    return { valid: false, reason: `The document was modified after signature ${modified + 1}: ${signers[modified]!.problem}.` };
  }
  const untrusted = signers.findIndex((signer) => signer.problem === "not trusted");
  if (untrusted >= 0) {
    return {
      valid: false,
      reason: `Signature ${untrusted + 1} is not trusted: its certificate does not chain up to a trusted root.`,
    };
  }
  const revoked = signers.findIndex((signer) => signer.subIndication === "REVOKED_NO_POE");
  if (revoked >= 0) return { valid: false, reason: `Signature ${revoked + 1}: ${signers[revoked]!.revocation}.` };
  const n = signers.length;
  return {
    valid: true,
    reason:
      n === 1 && signers[0]!.coversWholeDocument
        ? "All 1 signature(s) are intact and cover the whole document."
        : `All ${n} signature(s) are intact, and every later revision makes only permitted changes.`,
  };
}
