/** Where a PKCS#11 signing key is, and how to reach it. */
export interface Pkcs11KeySettings {
  /** Path of the PKCS#11 library, e.g. /usr/lib/softhsm/libsofthsm2.so. */
  modulePath: string;
  /** CKA_LABEL of the token (trailing blanks ignored). */
  tokenLabel: string;
  /** The user PIN. Never logged, never in an error message. */
  pin: string;
  /** CKA_LABEL of the private key. Its certificate has the same label, or the key's CKA_ID. */
  keyLabel: string;
  /** Sessions kept open: how many signatures run on the token at once. */
  poolSize: number;
  /** Certificates above the signing certificate, issuer first, DER. Default: none. */
  chainDer?: Buffer[];
}
