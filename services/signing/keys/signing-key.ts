import type { KeyObject } from "node:crypto";
import type { Pkcs11KeySettings } from "./pkcs11/settings.js";

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
   * What a signing worker thread needs to open this same key and sign in its
   * own thread: the private key when this process holds it (a local key
   * file), the token's settings, PIN included, for a key on a token. Cloned
   * to the thread; never to be logged.
   */
  keyForWorkers(): WorkerKey;
  /**
   * Closes the token sessions a worker thread opened on this key and left open
   * when it ended (sessions belong to the process, not the thread).
   */
  closeSessionsLeftBy?(handles: Iterable<Buffer>): void;
  close(): Promise<void>;
}

/** A signing key as it is handed to a worker thread (see {@link SigningKey.keyForWorkers}). */
export type WorkerKey =
  | { kind: "local"; privateKey: KeyObject; algorithm: KeyAlgorithm; certificateDer: Buffer; chainDer: Buffer[] }
  | { kind: "pkcs11"; settings: Pkcs11KeySettings };
