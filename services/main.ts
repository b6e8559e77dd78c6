import { setTimeout as sleep } from "node:timers/promises";
import { credentialCheck } from "./access/admit.js";
import { InternalTransport } from "./access/internal-transport.js";
import { ROLES, type Role } from "./contracts/module.js";
import { loadConfig, type Config } from "./configuration.js";
import { ConfigError } from "./core/config.js";
import { DataDir } from "./core/data-dir.js";
import { fixHeapGrowingFactor } from "./core/heap-growth.js";
import { createLogger, type Logger } from "./core/logger.js";
import { MessageLimits } from "./core/message-limits.js";
import { serveMetrics } from "./gateway/metrics-listener.js";
import { SHUTDOWN_CLEANUP_MS, stopAll, type Stop } from "./core/shutdown.js";
import { startTracing } from "./core/tracing.js";
import { startGateway } from "./gateway/gateway.js";
import { failRequestsOnUncaughtErrors } from "./gateway/request-scope.js";
import { startGrpcHost } from "./grpc/grpc-host.js";
import { keysModule } from "./keys/module.js";
import { ModuleSet } from "./module-set.js";
import { MODULES } from "./modules.js";

/**
 * Entry point. `all` (the default) runs every module in one process with
 * embedded defaults; `gateway` the public HTTP server alone, and each other
 * role the modules that name it (services/modules.ts), for split deployments.
 */

function internalTransport(config: Config): InternalTransport {
  const { grpcTlsCertFile: certFile, grpcTlsKeyFile: keyFile, grpcTlsCaFile: caFile } = config;
  // loadConfig lets the three files come all together or not at all
  const tls = certFile && keyFile && caFile ? { certFile, keyFile, caFile, reloadIntervalMs: config.grpcTlsReloadMs } : undefined;
  return new InternalTransport({ tls, gatewayNames: config.grpcGatewayNames, internalToken: config.internalToken });
}

/** A started role: how to take it out of rotation, and how to stop it, first to last. */
interface Started {
  drain(): void;
  stops: Stop[];
}

/** Starts the modules of `role`, their gRPC services on one port, and the gateway where the role has one. */
async function start(role: Role, config: Config, logger: Logger): Promise<Started> {
  const transport = internalTransport(config);
  if (role === "gateway" && !transport.encrypted && !config.internalToken) {
    throw new ConfigError(["GRPC_TLS_CERT_FILE, GRPC_TLS_KEY_FILE, GRPC_TLS_CA_FILE or DOCSERVICE_INTERNAL_TOKEN: a gateway started alone needs one to prove to the backends that it is the gateway"]);
  }
  const modules = new ModuleSet(MODULES, role, config, transport, logger);
  const stops = await modules.start();
  const messages = MessageLimits.of(config);
  // API keys are checked by the keys module, here or at KEYS_SERVICE_ADDR
  const credentials = credentialCheck(config.adminToken, modules.reach(keysModule));
  const hosted = modules.hosted();
  if (hosted.length > 0) {
    const host = await startGrpcHost(
      { host: config.grpcHost, port: config.grpcPort, transport, credentials, connections: config, messages, shutdownTimeoutMs: config.shutdownTimeoutMs },
      hosted,
      logger,
    );
    stops.unshift(host.shutdown);
  }
  if (role !== "all" && role !== "gateway") {
    // the aggregator serves nothing else, so its /metrics and /health take PORT; a backend's, METRICS_PORT when set
    const metricsPort = role === "aggregator" ? config.port : config.metricsPort;
    if (metricsPort !== undefined) stops.unshift(await serveMetrics({ host: config.host, port: metricsPort, metricsToken: config.metricsToken }, logger, { health: modules.health(), ready: modules.ready() }));
    return { drain: () => {}, stops };
  }
  const served = modules.served(messages);
  const gateway = await startGateway({
    settings: config,
    logger,
    credentials,
    routes: served.routes,
    bridges: served.bridges,
    backends: served.health,
    // only what runs beside the gateway: a gateway alone does not know its backends' sizes
    capacity: served.capacity,
    messages,
  });
  stops.unshift(gateway.close);
  return { drain: gateway.drain, stops };
}

async function main(): Promise<void> {
  const role = (process.argv[2] ?? "all") as Role;
  if (!ROLES.includes(role)) throw new ConfigError([`role "${role}": expected one of ${ROLES.join(", ")}`]);
  const config = loadConfig();
  fixHeapGrowingFactor();
  // before anything that makes spans; the OTEL_* variables decide whether it exports
  const tracing = startTracing(`docservice-${role}`);
  const logger = createLogger(config.logLevel, { traced: tracing !== undefined }).child({ role });
  failRequestsOnUncaughtErrors(logger);
  const { drain, stops } = await start(role, config, logger);
  if (tracing) stops.push(tracing.shutdown);
  if (role === "all" || role === "gateway") {
    const mail = config.smtpHost ? `SMTP ${config.smtpHost}:${config.smtpPort}` : new DataDir(config.dataDir).path("outbox");
    logger.info({ url: `http://${config.host}:${config.port}`, mail }, `DocService ${role} ready: http://${config.host}:${config.port} (mail: ${mail})`);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // the aggregator serves nothing: it leaves its consumer group at once, for the others to take its partitions
    const drainMs = role === "aggregator" ? 0 : config.shutdownDrainMs;
    logger.info({ signal, drainMs }, "shutting down");
    drain();
    await sleep(drainMs);
    const inTime = await stopAll(stops, config.shutdownTimeoutMs + SHUTDOWN_CLEANUP_MS, logger);
    logger.info("stopped");
    process.exit(inTime ? 0 : 1);
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
