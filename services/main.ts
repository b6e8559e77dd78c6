import { KeyServiceService } from "../gen/ts-proto/docservice/v1/keys.js";
import { SigningServiceService } from "../gen/ts-proto/docservice/v1/signing.js";
import { TelemetryServiceService } from "../gen/ts-proto/docservice/v1/telemetry.js";
import type { ConversionApi } from "./conversion/conversion-service.js";
import { remoteConversion } from "./conversion/conversion-grpc.js";
import { CONVERSION_SERVICE_NAME, provisionConversion } from "./conversion/provision.js";
import { credentialCheck } from "./access/admit.js";
import { InternalTransport } from "./access/internal-transport.js";
import { ConfigError, loadConfig, type Config } from "./core/config.js";
import { ServiceError } from "./core/errors.js";
import type { GrpcDefinition } from "./core/unary-api.js";
import { DataDir } from "./core/data-dir.js";
import { remoteApi } from "./core/grpc-client.js";
import { remoteHealthCheck } from "./core/grpc-health-client.js";
import { hostedUnary, startGrpcHost, type HostedService } from "./core/grpc-host.js";
import type { HealthCheck } from "./core/health.js";
import { fixHeapGrowingFactor } from "./core/heap-growth.js";
import { MessageLimits } from "./core/message-limits.js";
import { createLogger, type Logger } from "./core/logger.js";
import { AnnotationServiceService } from "../gen/ts-proto/docservice/v1/annotation.js";
import type { AnnotationApi } from "./annotation/annotation-service.js";
import { ANNOTATION_SERVICE_NAME, provisionAnnotation } from "./annotation/provision.js";
import { stopAll, type Stop } from "./core/shutdown.js";
import { startGateway } from "./gateway/gateway.js";
import { failRequestsOnUncaughtErrors } from "./gateway/request-scope.js";
import { keyServiceBridge, KEY_SERVICE_NAME } from "./keys/bridge.js";
import type { KeyServiceApi } from "./keys/key-service.js";
import { provisionKeyService } from "./keys/provision.js";
import { signingServiceBridge } from "./signing/bridge.js";
import { provisionSigning, SIGNING_SERVICE_NAME } from "./signing/provision.js";
import type { SigningApi } from "./signing/signing-service.js";
import { serveMetrics } from "./core/metrics-listener.js";
import { telemetryServiceBridge } from "./telemetry/bridge.js";
import { provisionAggregator, provisionTelemetry, TELEMETRY_SERVICE_NAME } from "./telemetry/provision.js";
import type { TelemetryApi } from "./telemetry/telemetry-service.js";

/**
 * Entry point. `all` (the default) runs every service in one process with
 * embedded defaults; `gateway`, `keys`, `conversion`, `signing`, `telemetry` and
 * `aggregator` (the Kafka consumer counting usage; /metrics on PORT) run one
 * piece each, for split deployments.
 */
const ROLES = ["all", "gateway", "keys", "conversion", "signing", "telemetry", "aggregator"] as const;
type Role = (typeof ROLES)[number];

/** Beyond SHUTDOWN_TIMEOUT_MS (in-flight requests), for closing threads, clients and stores. */
const SHUTDOWN_CLEANUP_MS = 20_000;

interface Backends {
  keys: KeyServiceApi;
  conversion: ConversionApi;
  annotation: AnnotationApi;
  signing: SigningApi;
  telemetry: TelemetryApi;
  health: Record<string, HealthCheck>;
}

/** Starts the backend services this role runs in-process, on one gRPC port. */
async function startBackends(role: Role, config: Config, transport: InternalTransport, logger: Logger, stops: Stop[]): Promise<Partial<Backends>> {
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
    const annotation = provisionAnnotation(config, conversion.service);
    hosted.push(annotation.hosted);
    backends.annotation = annotation.service;
    backends.health!.conversion = () => conversion.service.health();
  }
  if (role === "all" || role === "signing") {
    // Signing alone converts DOCX through a remote ConversionService.
    const conversion =
      backends.conversion ?? remoteConversion(requiredAddress(config, "CONVERSION_SERVICE_ADDR", config.conversionServiceAddress), config.conversionTimeoutMs + config.backendTimeoutMs, transport);
    const signing = await provisionSigning(config, dataDir, conversion, logger);
    stops.push(signing.close);
    hosted.push(signing.hosted);
    backends.signing = signing.service;
    backends.health!.signing = () => signing.service.health();
  }
  if (role === "all" || role === "telemetry") {
    const telemetry = provisionTelemetry(config, dataDir, logger, role === "all");
    stops.push(telemetry.close);
    hosted.push(telemetry.hosted);
    backends.telemetry = telemetry.service;
    backends.health!.telemetry = () => telemetry.service.health();
  }
  if (role === "aggregator") {
    if (config.kafkaBrokers.length === 0) throw new ConfigError(["KAFKA_BROKERS: required by the aggregator role"]);
    stops.push(provisionAggregator(config, dataDir, logger).close);
    stops.unshift(await serveMetrics(config, logger));
  }
  if (hosted.length > 0) {
    const host = await startGrpcHost(
      {
        host: config.grpcHost,
        port: config.grpcPort,
        transport,
        credentials: credentialCheck(config.adminToken, keysForCallers(config, transport, backends.keys)),
        connections: config,
        messages: MessageLimits.of(config),
      },
      hosted,
      logger,
    );
    stops.unshift(host.shutdown);
  }
  return backends;
}

function internalTransport(config: Config): InternalTransport {
  const { grpcTlsCertFile: certFile, grpcTlsKeyFile: keyFile, grpcTlsCaFile: caFile } = config;
  // loadConfig lets the three files come all together or not at all
  const tls = certFile && keyFile && caFile ? { certFile, keyFile, caFile, reloadIntervalMs: config.grpcTlsReloadMs } : undefined;
  return new InternalTransport({ tls, gatewayNames: config.grpcGatewayNames, internalToken: config.internalToken });
}

/** KeyService for checking API keys of gRPC callers: in-process when it runs here, else over gRPC as the gateway would. */
function keysForCallers(config: Config, transport: InternalTransport, localKeys: KeyServiceApi | undefined): KeyServiceApi | undefined {
  if (localKeys || !config.keysServiceAddress) return localKeys;
  return remoteApi(KeyServiceService, { serviceName: "Key service", address: config.keysServiceAddress, timeoutMs: config.backendTimeoutMs, transport }).api;
}

function requiredAddress(config: Config, name: string, value: string | undefined): string {
  if (!value) throw new ConfigError([`${name}: required when this role runs without it`]);
  return value;
}

/**
 * Clients of the backends a gateway started alone reaches over gRPC. A
 * backend whose address is unset is not deployed with this gateway: its
 * routes answer 503 saying so, and /v1/health leaves it out.
 */
function remoteBackends(config: Config, transport: InternalTransport, logger: Logger): Backends {
  const health: Record<string, HealthCheck> = {};
  function backend<T>(name: string, variable: string, address: string | undefined, serviceName: string, client: (address: string) => T): T {
    if (!address) {
      logger.warn(`${variable} is unset: the ${name} routes answer 503`);
      return notDeployed(name, variable) as T;
    }
    health[name] = remoteHealthCheck(address, serviceName, config.backendTimeoutMs, transport);
    return client(address);
  }
  const unary = <D extends GrpcDefinition>(definition: D, serviceName: string, timeoutMs = config.backendTimeoutMs) => (address: string) =>
    remoteApi(definition, { serviceName, address, timeoutMs, transport }).api;
  return {
    keys: backend("keys", "KEYS_SERVICE_ADDR", config.keysServiceAddress, KEY_SERVICE_NAME, unary(KeyServiceService, "Key service")),
    conversion: backend("conversion", "CONVERSION_SERVICE_ADDR", config.conversionServiceAddress, CONVERSION_SERVICE_NAME, (address) =>
      remoteConversion(address, config.conversionTimeoutMs + config.backendTimeoutMs, transport),
    ),
    // A sign may wait for a DOCX conversion and a time-stamp as well as the signature.
    signing: backend(
      "signing",
      "SIGNING_SERVICE_ADDR",
      config.signingServiceAddress,
      SIGNING_SERVICE_NAME,
      unary(SigningServiceService, "Signing service", config.conversionTimeoutMs + config.signingTsaTimeoutMs + config.backendTimeoutMs),
    ),
    // AnnotationService runs beside ConversionService, at its address.
    annotation: backend("annotation", "CONVERSION_SERVICE_ADDR", config.conversionServiceAddress, ANNOTATION_SERVICE_NAME, unary(AnnotationServiceService, "Annotation service", config.conversionTimeoutMs + config.fetchTimeoutMs + config.backendTimeoutMs)),
    telemetry: backend("telemetry", "TELEMETRY_SERVICE_ADDR", config.telemetryServiceAddress, TELEMETRY_SERVICE_NAME, unary(TelemetryServiceService, "Telemetry service")),
    health,
  };
}

/** An API whose every method answers 503: the service is not part of this deployment. */
function notDeployed(name: string, variable: string): object {
  return new Proxy(
    {},
    { get: () => () => Promise.reject(new ServiceError("UNAVAILABLE", `The ${name} service is not deployed with this gateway (${variable} is unset).`)) },
  );
}

async function start(role: Role, config: Config, logger: Logger): Promise<Stop[]> {
  const stops: Stop[] = [];
  const transport = internalTransport(config);
  if (role === "gateway" && !transport.encrypted && !config.internalToken) {
    throw new ConfigError(["GRPC_TLS_CERT_FILE, GRPC_TLS_KEY_FILE, GRPC_TLS_CA_FILE or DOCSERVICE_INTERNAL_TOKEN: a gateway started alone needs one to prove to the backends that it is the gateway"]);
  }
  const local = await startBackends(role, config, transport, logger, stops);
  if (role !== "all" && role !== "gateway") return stops;
  const backends = role === "all" ? (local as Backends) : remoteBackends(config, transport, logger);
  const gateway = await startGateway({
    settings: config,
    logger,
    keys: backends.keys,
    conversion: backends.conversion,
    annotation: backends.annotation,
    signing: backends.signing,
    telemetry: backends.telemetry,
    telemetryLimits: { metadataMaxBytes: config.telemetryMetadataMaxBytes },
    maxDocumentBytes: config.conversionMaxBytes,
    signLimits: { maxDocumentBytes: config.signingMaxBytes, metadataMaxBytes: config.signingMetadataMaxBytes },
    backends: backends.health,
    // in-process backends only: a gateway alone does not know its backends' sizes
    capacity: role === "all" ? { sign: config.signingWorkers, ...(config.conversionBackend === "local" ? { convert: config.conversionPoolSize } : {}) } : {},
    bridges: [keyServiceBridge(backends.keys), signingServiceBridge(backends.signing), telemetryServiceBridge(backends.telemetry)],
    messages: MessageLimits.of(config),
  });
  stops.unshift(gateway.close);
  return stops;
}

async function main(): Promise<void> {
  const role = (process.argv[2] ?? "all") as Role;
  if (!ROLES.includes(role)) throw new ConfigError([`role "${role}": expected one of ${ROLES.join(", ")}`]);
  const config = loadConfig();
  fixHeapGrowingFactor();
  const logger = createLogger(config.logLevel).child({ role });
  failRequestsOnUncaughtErrors(logger);
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
