import { KeyServiceService } from "../gen/ts-proto/docservice/v1/keys.js";
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

/**
 * Entry point. `all` (the default) runs every service in one process with
 * embedded defaults; `gateway`, `keys` and `conversion` run one piece each,
 * for split deployments.
 */
const ROLES = ["all", "gateway", "keys", "conversion"] as const;
type Role = (typeof ROLES)[number];

type Stop = () => Promise<void>;

interface Backends {
  keys: KeyServiceApi;
  conversion: ConversionApi;
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
  if (hosted.length > 0) {
    const host = await startGrpcHost(config.host, config.grpcPort, hosted, logger);
    stops.unshift(host.shutdown);
  }
  return backends;
}

/** Clients of the backends a gateway started alone reaches over gRPC. */
function remoteBackends(config: Config): Backends {
  const missing = [
    ["KEYS_SERVICE_ADDR", config.keysServiceAddress],
    ["CONVERSION_SERVICE_ADDR", config.conversionServiceAddress],
  ].filter(([, value]) => !value);
  if (missing.length > 0) throw new ConfigError(missing.map(([name]) => `${name}: required when the gateway runs alone`));
  const keysAddress = config.keysServiceAddress!;
  const conversionAddress = config.conversionServiceAddress!;
  return {
    keys: remoteApi(KeyServiceService, { serviceName: "Key service", address: keysAddress, timeoutMs: config.backendTimeoutMs }).api,
    conversion: remoteConversion(conversionAddress, config.conversionTimeoutMs + config.backendTimeoutMs),
    health: {
      keys: remoteHealthCheck(keysAddress, KEY_SERVICE_NAME, config.backendTimeoutMs),
      conversion: remoteHealthCheck(conversionAddress, CONVERSION_SERVICE_NAME, config.backendTimeoutMs),
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
    maxDocumentBytes: config.conversionMaxBytes,
    backends: backends.health,
    bridges: [keyServiceBridge(backends.keys)],
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
