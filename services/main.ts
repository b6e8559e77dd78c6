import { KeyServiceService } from "../gen/ts-proto/docservice/v1/keys.js";
import { SigningServiceService } from "../gen/ts-proto/docservice/v1/signing.js";
import type { ConversionApi } from "./conversion/conversion-service.js";
import { remoteConversion } from "./conversion/conversion-grpc.js";
import { CONVERSION_SERVICE_NAME, provisionConversion } from "./conversion/provision.js";
import { ConfigError, loadConfig, type Config } from "./core/config.js";
import { DataDir } from "./core/data-dir.js";
import { remoteApi } from "./core/grpc-client.js";
import { remoteHealthCheck } from "./core/grpc-health-client.js";
import { hostedUnary, startGrpcHost, type HostedService } from "./core/grpc-host.js";
import type { HealthCheck } from "./core/health.js";
import { createLogger, type Logger } from "./core/logger.js";
import { startGateway } from "./gateway/gateway.js";
import { keyServiceBridge, KEY_SERVICE_NAME } from "./keys/bridge.js";
import type { KeyServiceApi } from "./keys/key-service.js";
import { provisionKeyService } from "./keys/provision.js";
import { signingServiceBridge } from "./signing/bridge.js";
import { provisionSigning, SIGNING_SERVICE_NAME } from "./signing/provision.js";
import type { SigningApi } from "./signing/signing-service.js";

/**
 * Entry point. `all` (the default) runs every service in one process with
 * embedded defaults; `gateway`, `keys`, `conversion` and `signing` run one piece each,
 * for split deployments.
 */
const ROLES = ["all", "gateway", "keys", "conversion", "signing"] as const;
type Role = (typeof ROLES)[number];

type Stop = () => Promise<void>;

interface Backends {
  keys: KeyServiceApi;
  conversion: ConversionApi;
  signing: SigningApi;
  health: Record<string, HealthCheck>;
}

/** Starts the backend services this role runs in-process, on one gRPC port. */
async function startBackends(role: Role, config: Config, logger: Logger, stops: Stop[]): Promise<Partial<Backends>> {
  const dataDir = new DataDir(config.dataDir);
  const hosted: HostedService[] = [];
  const backends: Partial<Backends> = { health: {} };
  if (role === "all" || role === "keys") {
    const keys = provisionKeyService(config, dataDir, logger);
    stops.push(keys.close);
    hosted.push(hostedUnary(KEY_SERVICE_NAME, KeyServiceService, keys.service, () => keys.service.health()));
    backends.keys = keys.service;
    backends.health!.keys = () => keys.service.health();
  }
  if (role === "all" || role === "conversion") {
    const conversion = provisionConversion(config, dataDir, logger);
    stops.push(conversion.close);
    hosted.push(conversion.hosted);
    backends.conversion = conversion.service;
    backends.health!.conversion = () => conversion.service.health();
  }
  if (role === "all" || role === "signing") {
    // Signing alone converts DOCX through a remote ConversionService.
    const conversion = backends.conversion ?? remoteConversion(requiredAddress(config, "CONVERSION_SERVICE_ADDR", config.conversionServiceAddress), config.conversionTimeoutMs + config.backendTimeoutMs);
    const signing = await provisionSigning(config, dataDir, conversion, logger);
    stops.push(signing.close);
    hosted.push(signing.hosted);
    backends.signing = signing.service;
    backends.health!.signing = () => signing.service.health();
  }
  if (hosted.length > 0) {
    const host = await startGrpcHost(config.host, config.grpcPort, hosted, logger);
    stops.unshift(host.shutdown);
  }
  return backends;
}

function requiredAddress(config: Config, name: string, value: string | undefined): string {
  if (!value) throw new ConfigError([`${name}: required when this role runs without it`]);
  return value;
}

/** Clients of the backends a gateway started alone reaches over gRPC. */
function remoteBackends(config: Config): Backends {
  const missing = [
    ["KEYS_SERVICE_ADDR", config.keysServiceAddress],
    ["CONVERSION_SERVICE_ADDR", config.conversionServiceAddress],
    ["SIGNING_SERVICE_ADDR", config.signingServiceAddress],
  ].filter(([, value]) => !value);
  if (missing.length > 0) throw new ConfigError(missing.map(([name]) => `${name}: required when the gateway runs alone`));
  const keysAddress = config.keysServiceAddress!;
  const conversionAddress = config.conversionServiceAddress!;
  const signingAddress = config.signingServiceAddress!;
  return {
    keys: remoteApi(KeyServiceService, { serviceName: "Key service", address: keysAddress, timeoutMs: config.backendTimeoutMs }).api,
    conversion: remoteConversion(conversionAddress, config.conversionTimeoutMs + config.backendTimeoutMs),
    // A sign may wait for a DOCX conversion and a time-stamp as well as the signature.
    signing: remoteApi(SigningServiceService, {
      serviceName: "Signing service",
      address: signingAddress,
      timeoutMs: config.conversionTimeoutMs + config.signingTsaTimeoutMs + config.backendTimeoutMs,
    }).api,
    health: {
      keys: remoteHealthCheck(keysAddress, KEY_SERVICE_NAME, config.backendTimeoutMs),
      conversion: remoteHealthCheck(conversionAddress, CONVERSION_SERVICE_NAME, config.backendTimeoutMs),
      signing: remoteHealthCheck(signingAddress, SIGNING_SERVICE_NAME, config.backendTimeoutMs),
    },
  };
}

async function start(role: Role, config: Config, logger: Logger): Promise<Stop[]> {
  const stops: Stop[] = [];
  const local = await startBackends(role, config, logger, stops);
  if (role !== "all" && role !== "gateway") return stops;
  const backends = role === "all" ? (local as Backends) : remoteBackends(config);
  const gateway = await startGateway({
    settings: config,
    logger,
    keys: backends.keys,
    conversion: backends.conversion,
    signing: backends.signing,
    maxDocumentBytes: config.conversionMaxBytes,
    signLimits: { maxDocumentBytes: config.signingMaxBytes, metadataMaxBytes: config.signingMetadataMaxBytes },
    backends: backends.health,
    bridges: [keyServiceBridge(backends.keys), signingServiceBridge(backends.signing)],
  });
  stops.unshift(gateway.close);
  return stops;
}

async function main(): Promise<void> {
  const role = (process.argv[2] ?? "all") as Role;
  if (!ROLES.includes(role)) throw new ConfigError([`role "${role}": expected one of ${ROLES.join(", ")}`]);
  const config = loadConfig();
  const logger = createLogger(config.logLevel).child({ role });
  const stops = await start(role, config, logger);
  if (role === "all" || role === "gateway") {
    const mail = config.smtpHost ? `SMTP ${config.smtpHost}:${config.smtpPort}` : new DataDir(config.dataDir).path("outbox");
    logger.info({ url: `http://${config.host}:${config.port}`, mail }, `DocService ${role} ready: http://${config.host}:${config.port} (mail: ${mail})`);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    for (const stop of stops) await stop();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
  } else {
    console.error("DocService failed to start:", error);
  }
  process.exit(1);
});
