/**
 * Whether a signer certificate chains up to a trusted root, through the
 * intermediates the CMS and the document's DSS carry.
 */
import { X509Certificate } from "node:crypto";
import { ServiceError } from "../../core/errors.js";
import { safe } from "./safe.js";

/** Longest chain followed (a loop of cross-certificates must not run forever). */
const MAX_DEPTH = 10;

/** The configured trusted roots; a root that is not a certificate is the caller's error, not the document's. */
export function readTrustedRoots(ders: Buffer[] | undefined): X509Certificate[] | undefined {
  if (ders === undefined) return undefined;
  return ders.map((der, index) => {
    try {
      return new X509Certificate(der);
    } catch (error) {
      throw new ServiceError("VALIDATION_ERROR", `Trusted root ${index + 1} is not a DER X.509 certificate.`, {
        cause: error,
      });
    }
  });
}

/** Whether `certificate` is a root or is issued, through `intermediates`, by one. */
export function chainsToRoot(certificate: X509Certificate, intermediates: X509Certificate[], roots: X509Certificate[]): boolean {
  const isRoot = (c: X509Certificate) => roots.some((root) => Buffer.from(root.raw).equals(Buffer.from(c.raw)));
  const issuedBy = (child: X509Certificate, issuer: X509Certificate) =>
    safe(() => child.checkIssued(issuer) && child.verify(issuer.publicKey), false);
  let current = certificate;
  const seen = new Set<X509Certificate>();
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    if (isRoot(current)) return true;
    if (roots.some((root) => issuedBy(current, root))) return true;
    seen.add(current);
    const next = intermediates.find((candidate) => !seen.has(candidate) && issuedBy(current, candidate));
    if (!next) return false;
    current = next;
  }
  return false;
}
