import type { AnnotationApi } from "../annotation/annotation-service.js";
import { annotateRoute } from "./annotate-route.js";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Registry } from "prom-client";
import { routeAccess } from "../access/access-rules.js";
import { admit, credentialCheck } from "../access/admit.js";
import { ServiceError } from "../core/errors.js";
import { serviceMetrics } from "../core/service-metrics.js";
import type { HealthCheck } from "../core/health.js";
import type { Logger } from "../core/logger.js";
import type { ConversionApi } from "../conversion/conversion-service.js";
import type { KeyServiceApi } from "../keys/key-service.js";
import type { SigningApi } from "../signing/signing-service.js";
import type { TelemetryApi } from "../telemetry/telemetry-service.js";
import { authRoutes } from "./auth-routes.js";
import { bridgedMethods, bridgeRoutes, clientIpKey, type Bridge } from "./connect-bridge.js";
import { convertRoute } from "./convert-route.js";
import { signRoutes, type SignRouteLimits } from "./sign-routes.js";
import { telemetryRoutes } from "./telemetry-routes.js";
import { healthRoute, type CapacityHints } from "./health-route.js";
import { inRequestScope } from "./request-scope.js";
import { errorReply, sendReply, type Reply } from "./reply.js";
import { GatewayMetrics } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import type { RequestContext, Route } from "./route.js";

export interface GatewaySettings {
  host: string;
  port: number;
  trustProxy: boolean;
  adminToken: string | undefined;
  shutdownTimeoutMs: number;
}

export interface GatewayDeps {
  settings: GatewaySettings;
  logger: Logger;
  keys: KeyServiceApi;
  conversion: ConversionApi;
  annotation: AnnotationApi;
  signing: SigningApi;
  telemetry: TelemetryApi;
  telemetryLimits: { metadataMaxBytes: number };
  /** Largest upload /v1/convert reads. */
  maxDocumentBytes: number;
  signLimits: SignRouteLimits;
  /** Health check of each backend, by name, reported by /v1/health. */
  backends: Record<string, HealthCheck>;
  /** Reported by /v1/health for clients sizing their concurrency. */
  capacity?: CapacityHints;
  /** Services exposed over Connect and gRPC-Web. */
  bridges: Bridge[];
}

export interface RunningGateway {
  port: number;
  routes: Route[];
  close(): Promise<void>;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The public HTTP server: /v1 JSON routes, Connect and gRPC-Web for the bridged services, /openapi.json and /metrics. */
export async function startGateway(deps: GatewayDeps): Promise<RunningGateway> {
  const { settings, logger, keys } = deps;
  const startedAt = Date.now();
  const routes = [
    healthRoute(deps.backends, startedAt, deps.capacity),
    ...authRoutes(keys),
    convertRoute(deps.conversion, deps.maxDocumentBytes),
    annotateRoute(deps.annotation, deps.maxDocumentBytes),
    ...signRoutes(deps.signing, deps.signLimits),
    ...telemetryRoutes(deps.telemetry, deps.telemetryLimits),
  ];
  const routesByPath = new Map<string, Route[]>();
  for (const route of routes) routesByPath.set(route.path, [...(routesByPath.get(route.path) ?? []), route]);
  const openApi = JSON.stringify(openApiDocument(routes));
  const metrics = new GatewayMetrics();
  const credentials = credentialCheck(settings.adminToken, keys);
  const procedures = new Set(deps.bridges.flatMap((bridge) => bridgedMethods(bridge).map((method) => `/${bridge.descriptor.typeName}/${method.name}`)));

  const connect = connectNodeAdapter({
    routes: bridgeRoutes(deps.bridges, credentials),
    contextValues: (request) => createContextValues().set(clientIpKey, clientIpOf(request as IncomingMessage, settings.trustProxy)),
    fallback: (request, response) => {
      const requestId = String(response.getHeader("X-Request-Id"));
      sendReply(response as ServerResponse, errorReply(new ServiceError("NOT_FOUND", `No route for ${request.method} ${request.url?.split("?")[0]}.`), requestId), requestId);
    },
  });

  async function answer(context: RequestContext, route: Route): Promise<Reply> {
    try {
      const caller = await admit(routeAccess(route), { authorization: context.request.headers.authorization, fromGateway: false }, credentials);
      if (caller.kind === "apiKey") [context.apiKey, context.principal] = [caller.apiKey, caller.principal];
      return await route.handle(context);
    } catch (error) {
      const response = errorReply(error, context.requestId);
      if (response.status >= 500) logger.error({ err: error, cause: (error as Error).cause, requestId: context.requestId }, "request failed");
      return response;
    }
  }

  let inFlight = 0;
  let closing = false;

  async function handle(request: IncomingMessage, response: ServerResponse, requestId: string): Promise<void> {
    const started = performance.now();
    const target = request.url ?? "/";
    const queryAt = target.indexOf("?");
    const pathname = queryAt < 0 ? target : target.slice(0, queryAt);
    const candidates = routesByPath.get(pathname);
    const route = candidates?.find((r) => r.method === request.method);
    const label = candidates || procedures.has(pathname) || pathname === "/metrics" || pathname === "/openapi.json" ? pathname : "unmatched";
    inFlight++;
    metrics.inFlight.inc();
    if (closing) response.setHeader("Connection", "close");
    // "close" comes for every request, also one whose client went away before the answer ("finish" does not)
    response.on("close", () => {
      inFlight--;
      metrics.inFlight.dec();
      const seconds = (performance.now() - started) / 1000;
      const answered = response.writableFinished;
      metrics.observe(request.method ?? "", label, answered ? response.statusCode : 499, seconds);
      const line = { requestId, method: request.method, path: pathname, status: response.statusCode, ms: Math.round(seconds * 1e4) / 10 };
      logger.info(answered ? line : { ...line, clientClosed: true }, "request");
      if (closing) server.closeIdleConnections();
    });

    if (route) {
      const query = new URLSearchParams(queryAt < 0 ? "" : target.slice(queryAt + 1));
      const reply = await answer({ request, query, requestId, clientIp: clientIpOf(request, settings.trustProxy) }, route);
      return sendReply(response, route.cors ? { ...reply, headers: { ...reply.headers, ...CORS_HEADERS } } : reply, requestId);
    }
    if (request.method === "OPTIONS" && candidates?.some((r) => r.cors)) {
      return sendReply(response, { status: 204, body: "", contentType: "text/plain", headers: preflightHeaders(candidates) }, requestId);
    }
    if (candidates) {
      const allowed = candidates.map((r) => r.method).join(", ");
      const error = errorReply(new ServiceError("METHOD_NOT_ALLOWED", `${pathname} accepts ${allowed}.`), requestId);
      return sendReply(response, { ...error, headers: { ...error.headers, Allow: allowed } }, requestId);
    }
    response.setHeader("X-Request-Id", requestId);
    if (pathname === "/openapi.json" && request.method === "GET") {
      response.writeHead(200, { "Content-Type": "application/json; charset=utf-8" }).end(openApi);
    } else if (pathname === "/metrics" && request.method === "GET") {
      // merged per scrape: backend metrics may be registered after the gateway started
      const exposed = Registry.merge([metrics.registry, serviceMetrics]);
      response.writeHead(200, { "Content-Type": exposed.contentType }).end(await exposed.metrics());
    } else {
      connect(request, response);
    }
  }

  const server: Server = createServer((request, response) => {
    const incomingId = request.headers["x-request-id"];
    const requestId = typeof incomingId === "string" && REQUEST_ID.test(incomingId) ? incomingId : randomUUID();
    inRequestScope({ requestId, response }, () => handle(request, response, requestId)).catch((error: unknown) => {
      logger.error({ err: error, requestId }, "unhandled gateway error");
      if (!response.headersSent) sendReply(response, errorReply(error, requestId), requestId);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, host: settings.host }, "gateway listening");

  return {
    port,
    routes,
    /** Stops accepting, lets in-flight requests finish (up to the timeout), then closes every connection. */
    async close() {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, settings.shutdownTimeoutMs).unref());
      await Promise.race([closed, timeout]);
      if (inFlight > 0) logger.warn({ inFlight }, "shutdown timeout: closing connections with requests in flight");
      server.closeAllConnections();
      await closed;
    },
  };
}

/** Any origin, no credentials: the answer is readable by the page, and no cookie is ever sent or set. */
const CORS_HEADERS = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "X-Request-Id, Retry-After" };

function preflightHeaders(routes: Route[]): Record<string, string> {
  return {
    ...CORS_HEADERS,
    "Access-Control-Allow-Methods": routes.filter((r) => r.cors).map((r) => r.method).join(", "),
    "Access-Control-Allow-Headers": "Content-Type, X-License-Key",
    "Access-Control-Max-Age": "86400",
  };
}

function clientIpOf(request: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? request.headers["x-forwarded-for"] : undefined;
  if (typeof forwarded === "string") return forwarded.split(",")[0].trim();
  return request.socket.remoteAddress ?? "";
}
