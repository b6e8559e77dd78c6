import { z } from "zod";
import { availableCores } from "../core/container-limits.js";
import { SIGNATURE_LEVELS } from "./model.js";
import { type ConfigOf, optionalText, positiveInt, secret, variable } from "../core/config.js";

/** Signing: the key (a file or PKCS#11), the workers, the time-stamping authority and the limits of a request. docs/configuration.md's reference lists each one (a test checks). */
export const SIGNING_VARIABLES = {
  signingKeyBackend: variable("SIGNING_KEY_BACKEND", z.enum(["local", "pkcs11"]), "local", "Where the signing key lives: local (a key file; generated in the data directory when none is given) or pkcs11 (an HSM)."),
  signingKeyFile: variable("SIGNING_KEY_FILE", optionalText, undefined, "Local backend: PEM private key (with SIGNING_CERTIFICATE_FILE). Unset: a key and self-signed certificate are generated in the data directory."),
  signingCertificateFile: variable("SIGNING_CERTIFICATE_FILE", optionalText, undefined, "Local backend: PEM signing certificate (may also hold its chain)."),
  signingPkcs12File: variable("SIGNING_PKCS12_FILE", optionalText, undefined, "Local backend: a PKCS#12 (.p12/.pfx) file with the key and certificate, instead of the PEM files."),
  signingKeyPassphraseFile: variable("SIGNING_KEY_PASSPHRASE_FILE", optionalText, undefined, "Local backend: file holding the passphrase of an encrypted PEM key or of the PKCS#12 file."),
  signingChainFile: variable("SIGNING_CHAIN_FILE", optionalText, undefined, "PEM certificates above the signing certificate, embedded in every signature."),
  pkcs11Module: variable("PKCS11_MODULE", optionalText, undefined, "PKCS#11 backend: path of the module, e.g. /usr/lib/softhsm/libsofthsm2.so."),
  pkcs11TokenLabel: variable("PKCS11_TOKEN_LABEL", optionalText, undefined, "PKCS#11 backend: label of the token holding the key."),
  pkcs11KeyLabel: variable("PKCS11_KEY_LABEL", optionalText, undefined, "PKCS#11 backend: label of the private key (its certificate has the same label or CKA_ID)."),
  pkcs11PinFile: variable("PKCS11_PIN_FILE", optionalText, undefined, "PKCS#11 backend: file holding the user PIN (e.g. a mounted secret)."),
  pkcs11Pin: secret("PKCS11_PIN", optionalText, "PKCS#11 backend: the user PIN itself, when no PIN file is used. Never logged."),
  pkcs11Sessions: variable(
    "PKCS11_SESSIONS",
    z.union([z.literal("auto").transform(() => libuvThreadPoolSize()), z.coerce.number().int().min(1).max(256)]),
    "auto",
    "PKCS#11 sessions each signing worker may open. A token that answers fast (SoftHSM2, a PCIe HSM) is signed with synchronously, one session per worker; while one answers slowly (a network HSM), signatures go through libuv's thread pool, this many at once per worker. auto is that pool's size (UV_THREADPOOL_SIZE, default 4).",
  ),
  signingWorkers: variable(
    "SIGNING_WORKERS",
    z.union([z.literal("auto").transform(() => availableCores()), z.coerce.number().int().min(1).max(64)]),
    "auto",
    "Worker threads that build and sign PDFs; auto is one per core the process may use (a container's CPU limit, rounded up).",
  ),
  signingQueueLimit: variable("SIGNING_QUEUE_LIMIT", positiveInt, "64", "Sign and verify requests in progress at once; more are refused with 503 and Retry-After."),
  signingMaxBytes: variable("SIGNING_MAX_BYTES", positiveInt, "26214400", "Largest document /v1/sign and /v1/verify accept, sent or fetched."),
  signingMetadataMaxBytes: variable("SIGNING_METADATA_MAX_BYTES", positiveInt, "16384", "Largest `metadata` of a sign request, as JSON."),
  signingReplayTtlSeconds: variable("SIGNING_REPLAY_TTL_SECONDS", positiveInt, "86400", "How long a signed document is kept for repeats of its eventId."),
  signingTrustAnchorsFile: variable("SIGNING_TRUST_ANCHORS", optionalText, undefined, "PEM bundle of trust anchors (root certificates): /v1/verify requires each signer and TSA to chain up to one (else INDETERMINATE, NO_CERTIFICATE_CHAIN_FOUND), and B-LT signing completes chains with them."),
  signingTsaUrl: variable("SIGNING_TSA_URL", z.url({ protocol: /^https?$/ }).optional(), undefined, "RFC 3161 time-stamping authority; set, every signature is timestamped (PAdES B-T) and a TSA failure fails the request (503)."),
  signingLevel: variable(
    "SIGNING_LEVEL",
    z.enum(SIGNATURE_LEVELS).optional(),
    undefined,
    "PAdES level of a sign request that names none: B-B, B-T, B-LT or B-LTA (B-T and above need SIGNING_TSA_URL). Unset: B-T with a TSA, else B-B.",
  ),
  signingRevocationTimeoutMs: variable("SIGNING_REVOCATION_TIMEOUT_MS", positiveInt, "10000", "B-LT/B-LTA: deadline of one OCSP, CRL or issuer-certificate fetch (the hosts of DOCUMENT_FETCH_ALLOW_HOSTS may be internal)."),
  signingTsaTimeoutMs: variable("SIGNING_TSA_TIMEOUT_MS", positiveInt, "10000", "Deadline of one time-stamp request."),
  signingServiceAddress: variable("SIGNING_SERVICE_ADDR", optionalText, undefined, "host:port of SigningService for a gateway started alone (unset there: its routes answer 503)."),
};

export type SigningConfig = ConfigOf<typeof SIGNING_VARIABLES>;

/** Threads in libuv's pool, where slow tokens' signatures run: more sessions than that only queue. */
function libuvThreadPoolSize(): number {
  const size = Number(process.env.UV_THREADPOOL_SIZE);
  return Number.isInteger(size) && size > 0 ? size : 4;
}
