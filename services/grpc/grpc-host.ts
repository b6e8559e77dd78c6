import { Server, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import type { CredentialCheck } from "../access/admit.js";
import { guardService } from "./grpc-guard.js";
import type { InternalTransport } from "../access/internal-transport.js";
import { boundedDefinition, grpcServerOptions, type GrpcConnectionLimits } from "./grpc-limits.js";
import { grpcMetricsInterceptor } from "./grpc-metrics.js";
import type { MessageLimits } from "../core/message-limits.js";
import { unaryHandlers } from "./grpc-server.js";
import { probe, type HealthCheck } from "../core/health.js";
import type { Logger } from "../core/logger.js";
import type { GrpcDefinition, UnaryApi } from "./unary-api.js";

/** A service to serve: its generated definition, its handlers and how to tell it is healthy. */
export interface HostedService {
  /** Fully qualified name, e.g. "docservice.v1.KeyService"; also its name in the gRPC health protocol. */
  name: string;
  definition: GrpcDefinition;
  handlers: UntypedServiceImplementation;
  health: HealthCheck;
}

/** A service whose methods are all unary, served by its promise-based API. */
export function hostedUnary<D extends GrpcDefinition>(name: string, definition: D, api: UnaryApi<D>, health: HealthCheck): HostedService {
  return { name, definition, handlers: unaryHandlers(definition, api), health };
}

export interface GrpcHostSettings {
  host: string;
  /** auto: DEFAULT_GRPC_PORT, or a free port when another process holds it. */
  port: number | "auto";
  transport: InternalTransport;
  /** How callers of the hosted services are admitted (services/access). */
  credentials: CredentialCheck;
  connections: GrpcConnectionLimits;
  messages: MessageLimits;
  /** How long shutdown waits for calls in flight before it cuts them. */
  shutdownTimeoutMs: number;
}

export const DEFAULT_GRPC_PORT = 50051;

export interface GrpcHost {
  port: number;
  /** Stops accepting calls (GOAWAY), lets those in flight finish within the shutdown timeout, then cuts the rest. */
  shutdown(): Promise<void>;
}

const HEALTH_INTERVAL_MS = 2000;

/**
 * Serves the services on one gRPC port, with the standard grpc.health.v1
 * service (what Kubernetes gRPC probes and the gateway ask), refreshed from
 * each service's own health check.
 */
export async function startGrpcHost(settings: GrpcHostSettings, services: HostedService[], logger: Logger): Promise<GrpcHost> {
  const server = new Server({ ...grpcServerOptions(settings.connections, settings.messages), interceptors: [grpcMetricsInterceptor] });
  const health = new HealthImplementation({ "": "SERVING" });
  health.addToServer(server);
  for (const service of services) {
    server.addService(boundedDefinition(service.name, service.definition, settings.messages), guardService(service.name, service.definition, service.handlers, settings.transport, settings.credentials));
    health.setStatus(service.name, "NOT_SERVING");
  }
  const refresh = async () => {
    for (const service of services) {
      const report = await probe(service.health, HEALTH_INTERVAL_MS);
      health.setStatus(service.name, report.status === "ok" ? "SERVING" : "NOT_SERVING");
    }
  };
  await refresh();
  const timer = setInterval(() => void refresh(), HEALTH_INTERVAL_MS);
  timer.unref();

  const bind = (port: number) =>
    new Promise<number>((resolve, reject) =>
      server.bindAsync(`${settings.host}:${port}`, settings.transport.serverCredentials(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
  let boundPort: number;
  if (settings.port !== "auto") boundPort = await bind(settings.port);
  else {
    boundPort = await bind(DEFAULT_GRPC_PORT).catch(async (error: Error) => {
      if (!/address already in use/i.test(error.message)) throw error;
      const free = await bind(0);
      logger.warn({ port: free }, `gRPC port ${DEFAULT_GRPC_PORT} is taken by another process: serving gRPC on ${free} instead (set GRPC_PORT to choose)`);
      return free;
    });
  }
  logger.info({ host: settings.host, port: boundPort, tls: settings.transport.encrypted, services: services.map((s) => s.name) }, "gRPC services listening");
  return {
    port: boundPort,
    shutdown: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        const cut = setTimeout(() => {
          logger.warn({ timeoutMs: settings.shutdownTimeoutMs }, "shutdown timeout: cutting gRPC calls in flight");
          server.forceShutdown();
          resolve();
        }, settings.shutdownTimeoutMs).unref();
        server.tryShutdown(() => {
          clearTimeout(cut);
          resolve();
        });
      }),
  };
}
