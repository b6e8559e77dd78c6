import type { KeyObject } from "node:crypto";

/** Key algorithms the signing service supports. */
export type KeyAlgorithm = "RSA-2048" | "RSA-3072" | "ECDSA-P256";

/**
 * A private key that signs, wherever it lives: a PKCS#11 token (HSM) in
 * production, a local key file in embedded mode. A token's key never leaves
 * it; callers only get signatures.
 */
export interface SigningKey {
  readonly algorithm: KeyAlgorithm;
  /** The signing certificate, DER. */
  readonly certificateDer: Buffer;
  /** Certificates above it, issuer first, DER (empty for a self-signed certificate). */
  readonly chainDer: Buffer[];
  /**
   * Signs `data` with SHA-256: RSA PKCS#1 v1.5 (sha256WithRSAEncryption), or
   * ECDSA (ecdsa-with-SHA256) returned as a DER `ECDSA-Sig-Value`, as CMS wants.
   */
  sign(data: Buffer): Promise<Buffer>;
  /**
   * The private key itself when this process holds it (a local key file), for
   * the signing worker threads of this process to sign with in their own
   * thread; absent for a key on a token.
   */
  readonly privateKey?: KeyObject;
  close(): Promise<void>;
}
