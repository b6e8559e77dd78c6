import { X509Certificate, createHash } from "node:crypto";

export interface CertificateDescription {
  /** "CN=…, O=…": the certificate's subject on one line. */
  subject: string;
  issuer: string;
  /** Lower-case hex SHA-256 of the DER, as `POST /v1/verify` and the certificate page show it. */
  sha256: string;
  notBefore: Date;
  notAfter: Date;
  publicKeyPem: string;
  pem: string;
}

const oneLine = (name: string) => name.split("\n").join(", ");

export function describeCertificate(der: Buffer): CertificateDescription {
  const certificate = new X509Certificate(der);
  return {
    subject: oneLine(certificate.subject),
    issuer: oneLine(certificate.issuer),
    sha256: createHash("sha256").update(der).digest("hex"),
    notBefore: new Date(certificate.validFrom),
    notAfter: new Date(certificate.validTo),
    publicKeyPem: certificate.publicKey.export({ type: "spki", format: "pem" }) as string,
    pem: certificate.toString(),
  };
}
