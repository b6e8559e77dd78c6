import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { errorReply, sendReply } from "../contracts/reply.js";
import type { PlatformConfig } from "../core/config.js";
import { ServiceError } from "../core/errors.js";
import { probe, type HealthCheck } from "../core/health.js";
import type { Logger } from "../core/logger.js";
import { metricsRefusal } from "./metrics-access.js";
import { serviceMetrics } from "../core/service-metrics.js";

/** How long /health waits for the role's check. */
const HEALTH_TIMEOUT_MS = 2000;

/**
 * What one listener that answers probes and scrapes may hold: a scraper and
 * kubelet need a few connections, each a request of a few hundred bytes.
 */
const LIMITS = { maxConnections: 32, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000 };

/** What the listener reports: the role's health, dependencies included, and its readiness to take work, from its own state. */
export interface RoleChecks {
  health: HealthCheck;
  ready: HealthCheck;
}

/**
 * /metrics, /health, /readyz and /livez on PORT for a role without the
 * gateway (the usage aggregator, or a backend on METRICS_PORT): /health
 * answers 200 when `health` resolves, else 503 with the reason (the
 * aggregator's readiness: in its consumer group, its store answering);
 * /readyz the same for `ready` (a backend's readiness: its own state, never a
 * dependency its replicas share); /livez answers 200 while the process serves
 * at all (its liveness: it asks nothing of Redis or Kafka, whose outage must
 * not restart the pod); /metrics asks for METRICS_TOKEN (metrics-access.ts).
 * Returns how to stop it.
 */
export async function serveMetrics(config: Pick<PlatformConfig, "port" | "host" | "metricsToken">, logger: Logger, checks: RoleChecks): Promise<() => Promise<void>> {
  const server = createServer(async (request, response) => {
    const requestId = randomUUID();
    const refuse = (error: ServiceError) => void sendReply(response, { ...errorReply(error, requestId), headers: { Connection: "close" } }, requestId);
    if (request.method !== "GET") return refuse(new ServiceError("METHOD_NOT_ALLOWED", `${request.url} accepts GET.`));
    if (request.url === "/livez") return void response.writeHead(200, { "Content-Type": "text/plain" }).end("ok\n");
    if (request.url === "/health" || request.url === "/readyz") {
      const report = await probe(request.url === "/health" ? checks.health : checks.ready, HEALTH_TIMEOUT_MS);
      return void response.writeHead(report.status === "ok" ? 200 : 503, { "Content-Type": "application/json" }).end(JSON.stringify(report));
    }
    if (request.url !== "/metrics") return refuse(new ServiceError("NOT_FOUND", `No route for GET ${request.url}: this port serves /metrics, /health, /readyz and /livez.`));
    const refused = metricsRefusal(request, config.metricsToken);
    if (refused) return refuse(refused);
    response.writeHead(200, { "Content-Type": serviceMetrics.contentType }).end(await serviceMetrics.metrics());
  });
  server.maxConnections = LIMITS.maxConnections;
  server.headersTimeout = LIMITS.requestTimeoutMs;
  server.requestTimeout = LIMITS.requestTimeoutMs;
  server.keepAliveTimeout = LIMITS.keepAliveTimeoutMs;
  // a connection that sends nothing is closed after as long as a whole request may take
  server.timeout = LIMITS.requestTimeoutMs;
  server.on("timeout", (socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  logger.info({ port: config.port, token: config.metricsToken !== undefined }, "metrics listening on /metrics");
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
}
