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

/** By the certificate's bytes, which a key holds for its life: every signature names its certificate, and parsing it each time cost a tenth of a small document's signing. */
const described = new WeakMap<Buffer, CertificateDescription>();

export function describeCertificate(der: Buffer): CertificateDescription {
  let description = described.get(der);
  if (!description) described.set(der, (description = describe(der)));
  return description;
}

function describe(der: Buffer): CertificateDescription {
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
