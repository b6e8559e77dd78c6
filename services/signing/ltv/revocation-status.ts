/** What an OCSP response or a CRL says about one certificate; throws when it is not a sound answer about it. */
export interface RevocationStatus {
  source: "OCSP" | "CRL";
  /** Set: revoked at that time. */
  revokedAt?: Date;
  thisUpdate: Date;
  nextUpdate?: Date;
  /** OCSP: the responder's certificates the response carries. */
  responderCertificates: Buffer[];
}
