/**
 * The certificates of a DocService's internal gRPC (mTLS): a CA of its own,
 * and per component one RSA certificate, for serving and for calling,
 * named after the component's Service. The gateway is recognised by its
 * certificate's name (GRPC_GATEWAY_NAMES), so no other component can act as
 * the gateway. Pure functions of PEM text and time; the reconciler stores the
 * results in Secrets.
 */
import { generateKeyPairSync, randomBytes, X509Certificate } from "node:crypto";
import forge from "node-forge";

const DAY_MS = 86_400_000;
export const CA_VALIDITY_DAYS = 3650;
export const LEAF_VALIDITY_DAYS = 90;
/** A leaf is re-issued when less than this is left: kubelet refreshes mounted Secrets within minutes, and servers re-read them. */
export const RENEW_BEFORE_DAYS = 30;

export interface KeyPairPem {
  certificate: string;
  privateKey: string;
}

export function createCa(commonName: string, now = new Date()): KeyPairPem {
  const keys = rsaKeyPair();
  const certificate = certificateFor(keys.publicKey, commonName, now, CA_VALIDITY_DAYS, [
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  certificate.setIssuer(certificate.subject.attributes);
  certificate.sign(keys.privateKey, forge.md.sha256.create());
  return pem(certificate, keys.privateKey);
}

/** A certificate for `dnsNames` (the first is also the subject CN), for TLS server and client authentication. */
export function issueLeaf(ca: KeyPairPem, dnsNames: string[], now = new Date()): KeyPairPem {
  const caCertificate = forge.pki.certificateFromPem(ca.certificate);
  const keys = rsaKeyPair();
  const certificate = certificateFor(keys.publicKey, dnsNames[0]!, now, LEAF_VALIDITY_DAYS, [
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true, clientAuth: true },
    { name: "subjectAltName", altNames: dnsNames.map((value) => ({ type: 2, value })) },
    { name: "subjectKeyIdentifier" },
    { name: "authorityKeyIdentifier", keyIdentifier: caCertificate.generateSubjectKeyIdentifier().getBytes() },
  ]);
  certificate.setIssuer(caCertificate.subject.attributes);
  certificate.sign(forge.pki.privateKeyFromPem(ca.privateKey), forge.md.sha256.create());
  return pem(certificate, keys.privateKey);
}

/**
 * Whether `leaf` is still good: signed by `ca`, named exactly `dnsNames`, and
 * more than RENEW_BEFORE_DAYS from expiry. Anything unreadable is not good.
 */
export function leafIsCurrent(leaf: string, ca: string, dnsNames: string[], now = new Date()): boolean {
  try {
    const certificate = new X509Certificate(leaf);
    const authority = new X509Certificate(ca);
    const names = (certificate.subjectAltName ?? "").split(", ").map((entry) => entry.replace(/^DNS:/, ""));
    return (
      certificate.checkIssued(authority) &&
      certificate.verify(authority.publicKey) &&
      names.join(",") === dnsNames.join(",") &&
      Date.parse(certificate.validTo) - now.getTime() > RENEW_BEFORE_DAYS * DAY_MS
    );
  } catch {
    return false;
  }
}

/** The names a component's Service answers to inside the cluster. */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}

// RSA: forge, which writes the certificates, signs with RSA only; the key pair itself comes from node:crypto (native, fast).
function rsaKeyPair(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, publicKeyEncoding: { type: "spki", format: "pem" }, privateKeyEncoding: { type: "pkcs8", format: "pem" } });
  return { publicKey: forge.pki.publicKeyFromPem(publicKey), privateKey: forge.pki.privateKeyFromPem(privateKey) };
}

function certificateFor(publicKey: forge.pki.rsa.PublicKey, commonName: string, now: Date, validityDays: number, extensions: object[]): forge.pki.Certificate {
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = publicKey;
  certificate.serialNumber = serialNumber();
  // Five minutes back: a node whose clock runs slightly behind still accepts a fresh certificate.
  certificate.validity.notBefore = new Date(now.getTime() - 5 * 60_000);
  certificate.validity.notAfter = new Date(now.getTime() + validityDays * DAY_MS);
  certificate.setSubject([{ name: "commonName", value: commonName }]);
  certificate.setExtensions(extensions);
  return certificate;
}

function serialNumber(): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, never a leading zero
  return serial.toString("hex");
}

function pem(certificate: forge.pki.Certificate, privateKey: forge.pki.rsa.PrivateKey): KeyPairPem {
  return { certificate: forge.pki.certificateToPem(certificate), privateKey: forge.pki.privateKeyToPem(privateKey) };
}
