import { readFileSync } from "node:fs";
import { homedir, availableParallelism } from "node:os";
import { join } from "node:path";
import { z } from "zod";

/** One environment variable: its parser, its default (as the text a user would write) and what it does. */
interface Variable<T> {
  name: string;
  schema: z.ZodType<T>;
  default: string | undefined;
  doc: string;
  /** Its value is never shown, not even in the error naming a bad one. */
  secret: boolean;
}

function variable<T>(name: string, schema: z.ZodType<T>, defaultValue: string | undefined, doc: string): Variable<T> {
  return { name, schema, default: defaultValue, doc, secret: false };
}

function secret<T>(name: string, schema: z.ZodType<T>, doc: string): Variable<T> {
  return { name, schema, default: undefined, doc, secret: true };
}

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const boolean = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
const optionalText = z.string().min(1).optional();

/** The soft limit on this process's open files (each connection takes one); Linux's usual default where /proc does not say. */
function openFileLimit(): number {
  let limits = "";
  try {
    limits = readFileSync("/proc/self/limits", "utf8");
  } catch {
    // not Linux
  }
  const line = /^Max open files\s+(\d+)/m.exec(limits);
  return line ? Number(line[1]) : 65536;
}

function expandHome(path: string): string {
  return path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}

/** "N/S": N requests per S seconds. */
const rate = z
  .string()
  .regex(/^\d+\/\d+$/, "expected N/SECONDS, e.g. 5/3600")
  .transform((v) => {
    const [points, seconds] = v.split("/").map(Number);
    return { points, seconds };
  })
  .refine((r) => r.points > 0 && r.seconds > 0, "both numbers must be positive");

export type Rate = z.output<typeof rate>;

/** Every setting of the platform. README.md's configuration table lists each one (a test checks). */
export const VARIABLES = {
  port: variable("PORT", port, "8080", "HTTP port of the gateway: /v1 routes, Connect and gRPC-Web, /metrics."),
  host: variable("HOST", z.string().min(1), "0.0.0.0", "Interface the gateway binds to."),
  grpcHost: variable("GRPC_HOST", z.string().min(1), "127.0.0.1", "Interface the gRPC services bind to: loopback unless other machines must reach them (0.0.0.0 in Kubernetes)."),
  grpcPort: variable(
    "GRPC_PORT",
    z.union([z.literal("auto"), port]),
    "auto",
    "gRPC port of the backend services run by this process; auto is 50051, or a free port (logged) when another process has it; 0 always picks a free port.",
  ),
  grpcTlsCertFile: variable("GRPC_TLS_CERT_FILE", optionalText, undefined, "PEM certificate of this component for internal gRPC (server and client side); with GRPC_TLS_KEY_FILE and GRPC_TLS_CA_FILE it turns on mutual TLS."),
  grpcTlsKeyFile: variable("GRPC_TLS_KEY_FILE", optionalText, undefined, "PEM private key of GRPC_TLS_CERT_FILE."),
  grpcTlsCaFile: variable("GRPC_TLS_CA_FILE", optionalText, undefined, "PEM CA that every internal gRPC peer's certificate must be signed by; a client without one cannot complete the handshake."),
  grpcTlsReloadMs: variable("GRPC_TLS_RELOAD_MS", positiveInt, "60000", "How often the three GRPC_TLS_* files are re-read, so rotated certificates apply without a restart."),
  grpcGatewayNames: variable(
    "GRPC_GATEWAY_NAMES",
    z.string().transform((v) => v.split(",").map((n) => n.trim()).filter(Boolean)),
    "docservice-gateway",
    "Comma-separated certificate names (subject CN or DNS SAN) that carry the gateway's identity over mutual TLS.",
  ),
  internalToken: secret(
    "DOCSERVICE_INTERNAL_TOKEN",
    z.string().min(32).optional(),
    "The gateway's identity on internal gRPC without TLS (at least 32 characters); the gateway sends it, backends check it.",
  ),
  dataDir: variable("DOCSERVICE_DATA_DIR", z.string().min(1), "./.data", "Directory of the embedded stores and the e-mail outbox."),
  logLevel: variable(
    "LOG_LEVEL",
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    "info",
    "pino log level.",
  ),
  adminToken: secret("DOCSERVICE_ADMIN_TOKEN", z.string().min(16).optional(), "Bearer token for admin calls (at least 16 characters); admin calls are refused when unset."),
  trustProxy: variable("TRUST_PROXY", boolean, "false", "Take the client address from X-Forwarded-For (only behind a trusted proxy)."),
  shutdownTimeoutMs: variable("SHUTDOWN_TIMEOUT_MS", positiveInt, "10000", "How long SIGTERM waits for in-flight requests before closing connections."),
  headersTimeoutMs: variable("HTTP_HEADERS_TIMEOUT_MS", positiveInt, "10000", "Longest the request line and headers may take to arrive (then 408), and longest a new connection may stay silent."),
  requestTimeoutMs: variable("HTTP_REQUEST_TIMEOUT_MS", positiveInt, "300000", "Longest a whole request, body included, may take to arrive (then 408)."),
  keepAliveTimeoutMs: variable("HTTP_KEEP_ALIVE_TIMEOUT_MS", positiveInt, "5000", "How long an idle keep-alive connection is kept open between requests."),
  minBodyBytesPerSecond: variable("HTTP_MIN_BODY_BYTES_PER_SECOND", positiveInt, "1024", "Slowest request body accepted once it has started, averaged over 10 s (then 408 and the connection closed)."),
  maxConnections: variable(
    "HTTP_MAX_CONNECTIONS",
    z.union([z.literal("auto").transform(() => Math.floor(openFileLimit() / 2)), positiveInt]),
    "auto",
    "Open connections to the gateway in all; more are closed as they arrive. auto is half the process's open-file limit.",
  ),
  maxConnectionsPerClient: variable("HTTP_MAX_CONNECTIONS_PER_CLIENT", positiveInt, "512", "Open connections from one client address (the proxy's, behind one); more are closed as they arrive."),
  memoryBudgetMb: variable(
    "DOCSERVICE_MEMORY_BUDGET_MB",
    positiveInt.optional(),
    undefined,
    "Memory the request bodies and documents in flight may hold; a request that would pass it gets 503 with Retry-After before its body is read. Unset: half the container's memory limit (cgroup), or a quarter of the machine's memory without one.",
  ),
  grpcMaxConnectionIdleMs: variable("GRPC_MAX_CONNECTION_IDLE_MS", positiveInt, "300000", "A gRPC connection without calls this long is closed (GOAWAY)."),
  grpcMaxConnectionAgeMs: variable("GRPC_MAX_CONNECTION_AGE_MS", positiveInt, "1800000", "A gRPC connection older than this is asked to go away, so clients reconnect and spread over new replicas."),
  grpcMaxConnectionAgeGraceMs: variable("GRPC_MAX_CONNECTION_AGE_GRACE_MS", positiveInt, "120000", "How long the calls of a connection asked to go away may still run."),
  grpcMaxConcurrentStreams: variable("GRPC_MAX_CONCURRENT_STREAMS", positiveInt, "1024", "Calls at once on one gRPC connection."),
  keysServiceAddress: variable("KEYS_SERVICE_ADDR", optionalText, undefined, "host:port of KeyService for a gateway started alone (unset there: its routes answer 503)."),
  backendTimeoutMs: variable("BACKEND_TIMEOUT_MS", positiveInt, "10000", "Deadline of each gateway call to a backend service."),
  redisUrl: secret("REDIS_URL", z.url({ protocol: /^rediss?$/ }).optional(), "Redis for keys, codes and rate limits (redis://…); unset means the embedded store in the data directory."),
  smtpHost: variable("SMTP_HOST", optionalText, undefined, "SMTP server for e-mail; unset means .eml files in the outbox/ folder of the data directory."),
  smtpPort: variable("SMTP_PORT", port, "587", "SMTP port."),
  smtpSecure: variable("SMTP_SECURE", boolean, "false", "Use implicit TLS (port 465); otherwise STARTTLS is used when offered."),
  smtpUser: variable("SMTP_USER", optionalText, undefined, "SMTP user name, if the server needs authentication."),
  smtpPassword: secret("SMTP_PASSWORD", optionalText, "SMTP password."),
  mailFrom: variable("MAIL_FROM", z.string().min(3), "DocService <no-reply@docservice.local>", "Sender of the verification e-mails."),
  codeTtlSeconds: variable("KEYS_CODE_TTL_SECONDS", positiveInt, "900", "Lifetime of a one-time code."),
  codeMaxAttempts: variable("KEYS_CODE_MAX_ATTEMPTS", positiveInt, "5", "Wrong attempts after which a code dies."),
  codePepper: secret("KEYS_CODE_PEPPER", z.string().min(16).optional(), "Secret mixed into code hashes; shared by all KeyService replicas. Unset: generated once in the data directory."),
  authCacheTtlMs: variable("KEYS_AUTH_CACHE_TTL_MS", z.coerce.number().int().min(0), "10000", "How long a successful authentication is cached in-process; a revoked key stops working within it."),
  conversionBackend: variable("CONVERSION_BACKEND", z.enum(["local", "gotenberg"]), "local", "DOCX → PDF backend: local (warm LibreOffice pool) or gotenberg."),
  gotenbergUrl: variable("GOTENBERG_URL", z.url({ protocol: /^https?$/ }).optional(), undefined, "Gotenberg 8 base URL, e.g. http://gotenberg:3000 (with CONVERSION_BACKEND=gotenberg)."),
  conversionPoolSize: variable(
    "CONVERSION_POOL_SIZE",
    z.union([z.literal("auto").transform(() => availableParallelism()), z.coerce.number().int().min(1).max(64)]),
    "auto",
    "LibreOffice instances in the local pool; auto is one per core.",
  ),
  conversionTimeoutMs: variable("CONVERSION_TIMEOUT_MS", positiveInt, "60000", "Longest a conversion may take; then its instance is killed and restarted (504)."),
  conversionQueueLimit: variable("CONVERSION_QUEUE_LIMIT", positiveInt, "64", "Conversions that may wait for an instance; more are refused with 503 and Retry-After."),
  conversionMemoryLimitMb: variable("CONVERSION_MEMORY_LIMIT_MB", positiveInt, "1024", "An instance whose LibreOffice grows past this is restarted after its conversion."),
  conversionMaxBytes: variable("CONVERSION_MAX_BYTES", positiveInt, "26214400", "Largest document accepted (413 beyond, before the body is read)."),
  conversionMaxUnpackedBytes: variable("CONVERSION_MAX_UNPACKED_BYTES", positiveInt, "268435456", "Largest total uncompressed size of a DOCX/ODT (ZIP bomb guard)."),
  cacheDir: variable("DOCSERVICE_CACHE", z.string().min(1).transform(expandHome), "~/.cache/docservice", "Where the install scripts put the tools they build (unoserver, test servers)."),
  unoserverBin: variable("UNOSERVER_BIN", optionalText, undefined, "unoserver command driving the local pool; unset means bin/unoserver in DOCSERVICE_CACHE (installed by scripts/install/runtime.sh)."),
  conversionServiceAddress: variable("CONVERSION_SERVICE_ADDR", optionalText, undefined, "host:port of ConversionService for a gateway started alone (unset there: 503) or the signing role alone (required)."),
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
    z.union([z.literal("auto").transform(() => Math.max(4, 2 * availableParallelism())), z.coerce.number().int().min(1).max(256)]),
    "auto",
    "PKCS#11 sessions kept open (signatures on the token at once); auto is twice the cores, at least 4.",
  ),
  signingWorkers: variable(
    "SIGNING_WORKERS",
    z.union([z.literal("auto").transform(() => availableParallelism()), z.coerce.number().int().min(1).max(64)]),
    "auto",
    "Worker threads that build and sign PDFs; auto is one per core.",
  ),
  signingQueueLimit: variable("SIGNING_QUEUE_LIMIT", positiveInt, "64", "Sign and verify requests in progress at once; more are refused with 503 and Retry-After."),
  signingMaxBytes: variable("SIGNING_MAX_BYTES", positiveInt, "26214400", "Largest document /v1/sign and /v1/verify accept, sent or fetched."),
  signingMetadataMaxBytes: variable("SIGNING_METADATA_MAX_BYTES", positiveInt, "16384", "Largest `metadata` of a sign request, as JSON."),
  signingReplayTtlSeconds: variable("SIGNING_REPLAY_TTL_SECONDS", positiveInt, "86400", "How long a signed document is kept for repeats of its eventId."),
  signingTrustAnchorsFile: variable("SIGNING_TRUST_ANCHORS", optionalText, undefined, "PEM bundle of trust anchors (root certificates): /v1/verify requires each signer and TSA to chain up to one (else INDETERMINATE, NO_CERTIFICATE_CHAIN_FOUND), and B-LT signing completes chains with them."),
  signingTsaUrl: variable("SIGNING_TSA_URL", z.url({ protocol: /^https?$/ }).optional(), undefined, "RFC 3161 time-stamping authority; set, every signature is timestamped (PAdES B-T) and a TSA failure fails the request (503)."),
  signingLevel: variable(
    "SIGNING_LEVEL",
    z.enum(["B-B", "B-T", "B-LT", "B-LTA"]).optional(),
    undefined,
    "PAdES level of a sign request that names none: B-B, B-T, B-LT or B-LTA (B-T and above need SIGNING_TSA_URL). Unset: B-T with a TSA, else B-B.",
  ),
  signingRevocationTimeoutMs: variable("SIGNING_REVOCATION_TIMEOUT_MS", positiveInt, "10000", "B-LT/B-LTA: deadline of one OCSP, CRL or issuer-certificate fetch (the hosts of DOCUMENT_FETCH_ALLOW_HOSTS may be internal)."),
  signingTsaTimeoutMs: variable("SIGNING_TSA_TIMEOUT_MS", positiveInt, "10000", "Deadline of one time-stamp request."),
  fetchAllowHosts: variable(
    "DOCUMENT_FETCH_ALLOW_HOSTS",
    z
      .string()
      .optional()
      .transform((v) => (v ?? "").split(",").map((h) => h.trim()).filter(Boolean)),
    undefined,
    "Comma-separated hosts (host or host:port) that document.url may reach even when internal (loopback, private).",
  ),
  fetchTimeoutMs: variable("DOCUMENT_FETCH_TIMEOUT_MS", positiveInt, "10000", "Budget for reading a document.url, redirects included."),
  signingServiceAddress: variable("SIGNING_SERVICE_ADDR", optionalText, undefined, "host:port of SigningService for a gateway started alone (unset there: its routes answer 503)."),
  kafkaBrokers: variable(
    "KAFKA_BROKERS",
    z
      .string()
      .optional()
      .transform((v) => (v ?? "").split(",").map((b) => b.trim()).filter(Boolean)),
    undefined,
    "Comma-separated Kafka brokers (host:port) for usage events; unset means the embedded in-process pipeline and store.",
  ),
  telemetryTopic: variable("TELEMETRY_TOPIC", z.string().regex(/^[\w.-]{1,249}$/, "a Kafka topic name"), "docservice.usage.v1", "Kafka topic of usage events."),
  telemetryConsumerGroup: variable("TELEMETRY_CONSUMER_GROUP", z.string().min(1), "docservice-usage-aggregator", "Kafka consumer group of the usage aggregator."),
  telemetryDirectTimeoutMs: variable("TELEMETRY_DIRECT_TIMEOUT_MS", positiveInt, "1000", "How long a report waits for Kafka before its events go to the local spool instead."),
  telemetrySpoolMaxBytes: variable("TELEMETRY_SPOOL_MAX_BYTES", positiveInt, "1073741824", "Largest local spool of usage events (while Kafka is away); beyond it reports get 503 with Retry-After."),
  telemetryMetadataMaxBytes: variable("TELEMETRY_METADATA_MAX_BYTES", positiveInt, "2048", "Largest `metadata` of a usage report, as JSON."),
  telemetryServiceAddress: variable("TELEMETRY_SERVICE_ADDR", optionalText, undefined, "host:port of TelemetryService for a gateway started alone (unset there: its routes answer 503)."),
  registerRatePerEmail: variable("RATE_LIMIT_REGISTER_PER_EMAIL", rate, "5/3600", "Register calls allowed per address, as N/SECONDS."),
  registerRatePerIp: variable("RATE_LIMIT_REGISTER_PER_IP", rate, "20/3600", "Register calls allowed per client address."),
  verifyRatePerEmail: variable("RATE_LIMIT_VERIFY_PER_EMAIL", rate, "10/900", "Verify calls allowed per address."),
  verifyRatePerIp: variable("RATE_LIMIT_VERIFY_PER_IP", rate, "30/900", "Verify calls allowed per client address."),
};

/** Variables that are no longer read, and why: setting one stops the start, so nobody relies on it unknowingly. */
const REMOVED: Record<string, string> = {
  TELEMETRY_DEDUPE_WINDOW_SECONDS: "no longer used: usage from Kafka is applied once by its offsets, without remembering events; remove it",
};

type Variables = typeof VARIABLES;
export type Config = { [K in keyof Variables]: Variables[K] extends Variable<infer T> ? T : never };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Parses and validates every variable at once; a bad value throws a ConfigError naming each offending variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const config: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, spec] of Object.entries(VARIABLES) as [string, Variable<unknown>][]) {
    const given = env[spec.name];
    const raw = given === undefined || given.trim() === "" ? spec.default : given;
    const result = spec.schema.safeParse(raw);
    if (result.success) config[key] = result.data;
    else problems.push(`${spec.secret ? spec.name : `${spec.name}=${JSON.stringify(raw ?? "")}`}: ${result.error.issues.map((i) => i.message).join(", ")}`);
  }
  for (const [name, reason] of Object.entries(REMOVED)) if (env[name] !== undefined) problems.push(`${name}: ${reason}`);
  const tlsFiles = [VARIABLES.grpcTlsCertFile, VARIABLES.grpcTlsKeyFile, VARIABLES.grpcTlsCaFile].map((v) => v.name);
  const tlsGiven = tlsFiles.filter((name) => env[name]?.trim());
  if (tlsGiven.length > 0 && tlsGiven.length < tlsFiles.length) problems.push(`${tlsFiles.join(", ")}: set all three for mutual TLS, or none (only ${tlsGiven.join(", ")} is set)`);
  if (problems.length > 0) throw new ConfigError(problems);
  return config as Config;
}
