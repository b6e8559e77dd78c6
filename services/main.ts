import { KeyServiceService } from "../gen/ts-proto/docservice/v1/keys.js";
import { ConfigError, loadConfig, type Config } from "./core/config.js";
import { DataDir } from "./core/data-dir.js";
import { remoteApi } from "./core/grpc-client.js";
import { remoteHealthCheck } from "./core/grpc-health-client.js";
import { hosted, startGrpcHost } from "./core/grpc-host.js";
import { createLogger, type Logger } from "./core/logger.js";
import { startGateway } from "./gateway/gateway.js";
import { keyServiceBridge, KEY_SERVICE_NAME } from "./keys/bridge.js";
import { provisionKeyService } from "./keys/provision.js";

/**
 * Entry point. `all` (the default) runs every service in one process with
 * embedded defaults; `gateway` and `keys` run one piece each, for split
 * deployments.
 */
const ROLES = ["all", "gateway", "keys"] as const;
type Role = (typeof ROLES)[number];

type Stop = () => Promise<void>;

async function startKeys(config: Config, logger: Logger, stops: Stop[]) {
  const keys = provisionKeyService(config, new DataDir(config.dataDir), logger);
  stops.push(keys.close);
  const host = await startGrpcHost(
    config.host,
    config.grpcPort,
    [hosted({ name: KEY_SERVICE_NAME, definition: KeyServiceService, api: keys.service, health: () => keys.service.health() })],
    logger,
  );
  stops.unshift(host.shutdown);
  return keys.service;
}

async function start(role: Role, config: Config, logger: Logger): Promise<Stop[]> {
  const stops: Stop[] = [];
  if (role === "keys") {
    await startKeys(config, logger, stops);
    return stops;
  }
  let keys;
  let keysHealth;
  if (role === "all") {
    const service = await startKeys(config, logger, stops);
    keys = service;
    keysHealth = () => service.health();
  } else {
    if (!config.keysServiceAddress) throw new ConfigError(["KEYS_SERVICE_ADDR: required when the gateway runs alone"]);
    keys = remoteApi(KeyServiceService, { serviceName: "Key service", address: config.keysServiceAddress, timeoutMs: config.backendTimeoutMs }).api;
    keysHealth = remoteHealthCheck(config.keysServiceAddress, KEY_SERVICE_NAME, config.backendTimeoutMs);
  }
  const gateway = await startGateway({
    settings: config,
    logger,
    keys,
    backends: { keys: keysHealth },
    bridges: [keyServiceBridge(keys)],
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
  if (role !== "keys") {
    const outbox = config.smtpHost ? `SMTP ${config.smtpHost}:${config.smtpPort}` : new DataDir(config.dataDir).path("outbox");
    logger.info({ url: `http://${config.host}:${config.port}`, mail: outbox }, `DocService ${role} ready: http://${config.host}:${config.port} (mail: ${outbox})`);
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
