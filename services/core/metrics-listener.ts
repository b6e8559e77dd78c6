import { createServer } from "node:http";
import type { PlatformConfig } from "./config.js";
import type { Logger } from "./logger.js";
import { serviceMetrics } from "./service-metrics.js";

/** /metrics on PORT for a role without the gateway (the usage aggregator); returns how to stop it. */
export async function serveMetrics(config: Pick<PlatformConfig, "port" | "host">, logger: Logger): Promise<() => Promise<void>> {
  const server = createServer(async (request, response) => {
    if (request.url !== "/metrics") return void response.writeHead(404).end();
    response.writeHead(200, { "Content-Type": serviceMetrics.contentType }).end(await serviceMetrics.metrics());
  });
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  logger.info({ port: config.port }, "metrics listening on /metrics");
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
