import { createServer } from "node:http";
import type { PlatformConfig } from "./config.js";
import { probe, type HealthCheck } from "./health.js";
import type { Logger } from "./logger.js";
import { serviceMetrics } from "./service-metrics.js";

/** How long /health waits for the role's check. */
const HEALTH_TIMEOUT_MS = 2000;

/**
 * /metrics and /health on PORT for a role without the gateway (the usage
 * aggregator): /health answers 200 when `health` resolves, else 503 with the
 * reason (its readiness; /metrics, which needs nothing outside the process,
 * is its liveness). Returns how to stop it.
 */
export async function serveMetrics(config: Pick<PlatformConfig, "port" | "host">, logger: Logger, health: HealthCheck): Promise<() => Promise<void>> {
  const server = createServer(async (request, response) => {
    if (request.url === "/health") {
      const report = await probe(health, HEALTH_TIMEOUT_MS);
      return void response.writeHead(report.status === "ok" ? 200 : 503, { "Content-Type": "application/json" }).end(JSON.stringify(report));
    }
    if (request.url !== "/metrics") return void response.writeHead(404).end();
    response.writeHead(200, { "Content-Type": serviceMetrics.contentType }).end(await serviceMetrics.metrics());
  });
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  logger.info({ port: config.port }, "metrics listening on /metrics");
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
