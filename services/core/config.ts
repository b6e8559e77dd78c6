import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

/** One environment variable: its parser, its default (as the text a user would write) and what it does. */
export interface Variable<T> {
  name: string;
  schema: z.ZodType<T>;
  default: string | undefined;
  doc: string;
  /** Its value is never shown, not even in the error naming a bad one. */
  secret: boolean;
}

export function variable<T>(name: string, schema: z.ZodType<T>, defaultValue: string | undefined, doc: string): Variable<T> {
  return { name, schema, default: defaultValue, doc, secret: false };
}

export function secret<T>(name: string, schema: z.ZodType<T>, doc: string): Variable<T> {
  return { name, schema, default: undefined, doc, secret: true };
}

export const port = z.coerce.number().int().min(0).max(65535);
export const positiveInt = z.coerce.number().int().positive();
export const nonNegativeInt = z.coerce.number().int().nonnegative();
export const boolean = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
export const optionalText = z.string().min(1).optional();

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

export function expandHome(path: string): string {
  return path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}

/** "N/S": N requests per S seconds. */
export const rate = z
  .string()
  .regex(/^\d+\/\d+$/, "expected N/SECONDS, e.g. 5/3600")
  .transform((v) => {
    const [points, seconds] = v.split("/").map(Number);
    return { points, seconds };
  })
  .refine((r) => r.points > 0 && r.seconds > 0, "both numbers must be positive");

export type Rate = z.output<typeof rate>;

/** What every process reads, whatever its modules: listening, internal gRPC, the data directory, logs, admin, limits, Redis, fetching by URL. The modules declare their own beside them (services/configuration.ts gathers them). */
export const PLATFORM_VARIABLES = {
  port: variable("PORT", port, "8080", "HTTP port of the gateway: /v1 routes, Connect and gRPC-Web, /metrics."),
  host: variable("HOST", z.string().min(1), "0.0.0.0", "Interface the gateway binds to."),
  metricsPort: variable(
    "METRICS_PORT",
    port.optional(),
    undefined,
    "HTTP port of /metrics and /health (its modules' readiness) for a backend role (keys, signing, conversion, telemetry), on HOST; unset: none. The gateway and the aggregator serve them on PORT.",
  ),
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
  metricsToken: secret(
    "METRICS_TOKEN",
    z.string().min(16).optional(),
    "Bearer token that /metrics asks of callers (at least 16 characters; the operator sets one per DocService); unset: /metrics answers this machine only.",
  ),
  adminToken: secret("DOCSERVICE_ADMIN_TOKEN", z.string().min(16).optional(), "Bearer token for admin calls (at least 16 characters); admin calls are refused when unset."),
  trustProxy: variable("TRUST_PROXY", boolean, "false", "Take the client address from X-Forwarded-For (only behind a trusted proxy)."),
  shutdownDrainMs: variable(
    "SHUTDOWN_DRAIN_MS",
    nonNegativeInt,
    "0",
    "After SIGTERM, how long the process goes on serving before it stops accepting: /readyz and /v1/health answer 503 (stopping) and every answer closes its connection, while load balancers and Kubernetes Endpoints stop sending it requests. At least HTTP_KEEP_ALIVE_TIMEOUT_MS, so that idle keep-alive connections time out before it stops accepting rather than being cut as a client reuses one. The operator sets 5000, or the keep-alive timeout if longer.",
  ),
  shutdownTimeoutMs: variable(
    "SHUTDOWN_TIMEOUT_MS",
    positiveInt,
    "10000",
    "How long, once it stops accepting, the process waits for requests in flight (HTTP and gRPC) before closing their connections. The operator sets each component's longest request.",
  ),
  headersTimeoutMs: variable("HTTP_HEADERS_TIMEOUT_MS", positiveInt, "10000", "Longest the request line and headers may take to arrive (then 408), and longest a new connection may stay silent."),
  requestTimeoutMs: variable("HTTP_REQUEST_TIMEOUT_MS", positiveInt, "300000", "Longest a whole request, body included, may take to arrive (then 408)."),
  keepAliveTimeoutMs: variable("HTTP_KEEP_ALIVE_TIMEOUT_MS", positiveInt, "5000", "How long an idle keep-alive connection is kept open between requests."),
  minBodyBytesPerSecond: variable("HTTP_MIN_BODY_BYTES_PER_SECOND", positiveInt, "1024", "Slowest request body accepted once it has started, averaged over 10 s (then 408 and the connection closed)."),
  maxConnections: variable(
    "HTTP_MAX_CONNECTIONS",
    z.union([z.literal("auto").transform(() => Math.floor(openFileLimit() / 2)), positiveInt]),
    "auto",
    "Open connections to the gateway in all; past it, a new one takes the place of the oldest that has no request being served (closed when all have). auto is half the process's open-file limit.",
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
  backendTimeoutMs: variable("BACKEND_TIMEOUT_MS", positiveInt, "10000", "Deadline of each gateway call to a backend service."),
  redisUrl: secret("REDIS_URL", z.url({ protocol: /^rediss?$/ }).optional(), "Redis for keys, codes and rate limits (redis://…); unset means the embedded store in the data directory."),
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
};

/** Variables that are no longer read, and why: setting one stops the start, so nobody relies on it unknowingly. */
const REMOVED: Record<string, string> = {
  TELEMETRY_DEDUPE_WINDOW_SECONDS: "no longer used: usage from Kafka is applied once by its offsets, without remembering events; remove it",
};

/** The parsed values of a set of variables, by key. */
export type ConfigOf<V> = { [K in keyof V]: V[K] extends Variable<infer T> ? T : never };

export type PlatformConfig = ConfigOf<typeof PLATFORM_VARIABLES>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Parses and validates every variable at once; a bad value throws a ConfigError naming each offending variable. */
export function loadVariables<V extends Record<string, Variable<unknown>>>(variables: V, env: NodeJS.ProcessEnv): ConfigOf<V> {
  const config: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, spec] of Object.entries(variables)) {
    const given = env[spec.name];
    const raw = given === undefined || given.trim() === "" ? spec.default : given;
    const result = spec.schema.safeParse(raw);
    if (result.success) config[key] = result.data;
    else problems.push(`${spec.secret ? spec.name : `${spec.name}=${JSON.stringify(raw ?? "")}`}: ${result.error.issues.map((i) => i.message).join(", ")}`);
  }
  for (const [name, reason] of Object.entries(REMOVED)) if (env[name] !== undefined) problems.push(`${name}: ${reason}`);
  const tlsFiles = [PLATFORM_VARIABLES.grpcTlsCertFile, PLATFORM_VARIABLES.grpcTlsKeyFile, PLATFORM_VARIABLES.grpcTlsCaFile].map((v) => v.name);
  const tlsGiven = tlsFiles.filter((name) => env[name]?.trim());
  if (tlsGiven.length > 0 && tlsGiven.length < tlsFiles.length) problems.push(`${tlsFiles.join(", ")}: set all three for mutual TLS, or none (only ${tlsGiven.join(", ")} is set)`);
  if (problems.length > 0) throw new ConfigError(problems);
  return config as ConfigOf<V>;
}
