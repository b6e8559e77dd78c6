import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isIP, type AddressInfo } from "node:net";
import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Registry } from "prom-client";
import { routeAccess } from "../access/access-rules.js";
import { admit, type CredentialCheck } from "../access/admit.js";
import type { Bridge } from "../contracts/bridge.js";
import type { CapacityHints } from "../contracts/module.js";
import { errorReply, sendReply, type Reply } from "../contracts/reply.js";
import type { RequestContext, Route } from "../contracts/route.js";
import { asServiceError, isServerFault, ServiceError } from "../core/errors.js";
import type { HealthCheck } from "../core/health.js";
import type { Logger } from "../core/logger.js";
import type { MessageLimits } from "../core/message-limits.js";
import { metricsRefusal } from "./metrics-access.js";
import { serviceMetrics } from "../core/service-metrics.js";
import { inSpan, mayRecord, traceFieldsOf } from "../core/tracing.js";
import { answerClientErrors } from "./client-errors.js";
import { bridgedMethods, bridgeRoutes, clientIpKey, grpcOnlyMethods, requestIdKey } from "./connect-bridge.js";
import { applyConnectionLimits, type ConnectionLimits } from "./connection-limits.js";
import { healthRoute } from "./health-route.js";
import { MemoryBudget, memoryBudgetBytes } from "./memory-budget.js";
import { GatewayMetrics } from "./metrics.js";
import { apiReferenceFiles } from "./api-reference.js";
import { openApiDocument } from "./openapi.js";
import { inRequestScope } from "./request-scope.js";
import { announcesBody, endWithAnswer } from "./unread-body.js";
import { endRequestSpan, nameRequestSpan, recordRequestError, servedInSpan, type Span } from "./request-span.js";

export interface GatewaySettings extends ConnectionLimits {
  host: string;
  port: number;
  trustProxy: boolean;
  adminToken: string | undefined;
  /** METRICS_TOKEN: what /metrics asks of callers; unset, it answers this machine only. */
  metricsToken: string | undefined;
  shutdownTimeoutMs: number;
  /** DOCSERVICE_MEMORY_BUDGET_MB; unset: from the container's memory limit. */
  memoryBudgetMb: number | undefined;
}

export interface GatewayDeps {
  settings: GatewaySettings;
  logger: Logger;
  /** How callers are admitted: the admin token, and API keys through the keys module. */
  credentials: CredentialCheck;
  /** The modules' /v1 routes. */
  routes: Route[];
  /** The modules' services, exposed over Connect and gRPC-Web. */
  bridges: Bridge[];
  /** Health check of each backend, by name, reported by /v1/health. */
  backends: Record<string, HealthCheck>;
  /** Reported by /v1/health for clients sizing their concurrency. */
  capacity?: CapacityHints;
  /** The largest body of each route and message of each RPC. */
  messages: MessageLimits;
}

export interface RunningGateway {
  port: number;
  routes: Route[];
  /**
   * Leaving: /readyz and /v1/health answer 503 (stopping), so load balancers stop
   * sending requests here, and every answer closes its connection, so
   * clients reconnect elsewhere; requests are still served until close().
   */
  drain(): void;
  close(): Promise<void>;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** What the gateway answers itself outside /v1: the API's description, /metrics, and the kubelet's probes. */
const OWN_PATHS = new Set(["/openapi.json", "/metrics", "/livez", "/readyz"]);

/** Every /v1 route the gateway serves: /v1/health and the modules' (also what /openapi.json describes). */
export function gatewayRoutes(deps: Pick<GatewayDeps, "routes" | "backends" | "capacity">, startedAt: number, leaving: () => boolean = () => false): Route[] {
  return [healthRoute(deps.backends, startedAt, deps.capacity, leaving), ...deps.routes];
}

/**
 * The public HTTP server: the modules' /v1 JSON routes and /v1/health,
 * Connect and gRPC-Web for the modules' services, /openapi.json, its reference page /docs, /metrics, and /livez and /readyz for the kubelet.
 * It hosts; what each route and RPC does is its module's.
 */
export async function startGateway(deps: GatewayDeps): Promise<RunningGateway> {
  const { settings, logger, credentials } = deps;
  const startedAt = Date.now();
  let leaving = false;
  const routes = gatewayRoutes(deps, startedAt, () => leaving);
  const routesByPath = new Map<string, Route[]>();
  for (const route of routes) routesByPath.set(route.path, [...(routesByPath.get(route.path) ?? []), route]);
  const openApi = JSON.stringify(openApiDocument(routes));
  const apiReference = apiReferenceFiles();
  const metrics = new GatewayMetrics();
  const procedures = new Set(deps.bridges.flatMap((bridge) => bridgedMethods(bridge).map((method) => `/${bridge.descriptor.typeName}/${method.name}`)));
  const grpcOnly = grpcOnlyMethods(deps.bridges);

  // each Connect request's X-Request-Id, for the bridge's log lines
  const requestIds = new WeakMap<IncomingMessage, string>();
  const connect = connectNodeAdapter({
    routes: bridgeRoutes(deps.bridges, credentials, deps.messages, logger),
    contextValues: (request) =>
      createContextValues()
        .set(clientIpKey, clientIpOf(request as IncomingMessage, settings.trustProxy))
        .set(requestIdKey, requestIds.get(request as IncomingMessage) ?? ""),
    fallback: (request, response) => {
      const requestId = String(response.getHeader("X-Request-Id"));
      const pathname = request.url?.split("?")[0] ?? "";
      const message = grpcOnly.get(pathname) ?? `No route for ${request.method} ${pathname}.`;
      sendReply(response as ServerResponse, errorReply(new ServiceError("NOT_FOUND", message), requestId), requestId);
    },
  });

  async function answer(context: RequestContext, route: Route): Promise<Reply> {
    try {
      const access = { authorization: context.request.headers.authorization, fromGateway: false };
      const caller = mayRecord() ? await inSpan("authenticate", {}, () => admit(routeAccess(route), access, credentials)) : await admit(routeAccess(route), access, credentials);
      if (caller.kind === "apiKey") [context.apiKey, context.principal] = [caller.apiKey, caller.principal];
      return await route.handle(context);
    } catch (error) {
      const response = errorReply(error, context.requestId);
      recordRequestError(error);
      if (isServerFault(asServiceError(error))) logger.error({ err: error, cause: (error as Error).cause, requestId: context.requestId }, "request failed");
      return response;
    }
  }

  let inFlight = 0;
  const budget = new MemoryBudget(memoryBudgetBytes(settings.memoryBudgetMb));
  logger.info({ memoryBudgetMb: Math.round(budget.limitBytes / 2 ** 20) }, "memory budget for request bodies in flight");

  /** Why a request is refused before its body is read, if it is: framing that HTTP/1.1 or /v1 does not take. */
  function framingError(request: IncomingMessage, route: Route | undefined): ServiceError | undefined {
    if (request.httpVersion === "1.1" && request.headers.host === undefined) {
      return new ServiceError("VALIDATION_ERROR", "An HTTP/1.1 request needs a Host header.", { details: [{ field: "Host", issue: "is missing" }] });
    }
    const encoding = request.headers["content-encoding"];
    if (route && encoding !== undefined && encoding.toLowerCase() !== "identity") {
      return new ServiceError("UNSUPPORTED_MEDIA_TYPE", "/v1 request bodies are read as sent: drop Content-Encoding.", { details: [{ field: "Content-Encoding", issue: "must be absent or identity" }] });
    }
    return undefined;
  }

  /** Takes the body's share of the memory budget (throws UNAVAILABLE when there is no room); returns what gives it back. */
  function takeMemory(request: IncomingMessage, pathname: string, route: Route | undefined): (() => void) | undefined {
    const declared = request.headers["content-length"];
    const bodyBytes = declared !== undefined ? Number(declared) : request.headers["transfer-encoding"] !== undefined ? bodyLimit(request.method ?? "", pathname, route) : 0;
    return bodyBytes > 0 ? budget.take(bodyBytes) : undefined;
  }

  /** What a body of unknown length may reach: its route's limit, or its RPC's (Connect's path is /service/method). */
  function bodyLimit(method: string, pathname: string, route: Route | undefined): number {
    if (route) return deps.messages.route(method, pathname);
    const [, service, rpc] = pathname.split("/");
    return deps.messages.rpc(service ?? "", rpc ?? "");
  }

  async function handle(request: IncomingMessage, response: ServerResponse, requestId: string, span: Span | undefined): Promise<void> {
    const started = performance.now();
    const target = request.url ?? "/";
    const queryAt = target.indexOf("?");
    const pathname = queryAt < 0 ? target : target.slice(0, queryAt);
    const candidates = routesByPath.get(pathname);
    const route = candidates?.find((r) => r.method === request.method);
    const label = candidates || procedures.has(pathname) || grpcOnly.has(pathname) || OWN_PATHS.has(pathname) || Object.hasOwn(apiReference, pathname) ? pathname : "unmatched";
    inFlight++;
    metrics.inFlight.inc();
    if (span) nameRequestSpan(span, request.method ?? "", label);
    if (leaving) response.setHeader("Connection", "close");
    const endServing = limits.serving(request, response, requestId);
    if (announcesBody(request)) endWithAnswer(request, response);
    let giveMemoryBack: (() => void) | undefined;
    // "close" comes for every request, also one whose client went away before the answer ("finish" does not)
    response.on("close", () => {
      endServing();
      giveMemoryBack?.();
      inFlight--;
      metrics.inFlight.dec();
      const seconds = (performance.now() - started) / 1000;
      const answered = response.writableFinished;
      metrics.observe(request.method ?? "", label, answered ? response.statusCode : 499, seconds);
      // the request's span by name, not the active one: "close" fires outside the request's context
      const line = { requestId, method: request.method, path: pathname, status: response.statusCode, ms: Math.round(seconds * 1e4) / 10, ...traceFieldsOf(span) };
      logger.info(answered ? line : { ...line, clientClosed: true }, "request");
      if (span) endRequestSpan(span, answered ? response.statusCode : 499);
    });

    let refused = framingError(request, route);
    try {
      if (!refused) giveMemoryBack = takeMemory(request, pathname, route);
    } catch (error) {
      refused = error as ServiceError;
    }
    if (refused) {
      const reply = errorReply(refused, requestId);
      // answered at once, the body unread: what still comes of it is discarded within unread-body.ts's bounds, then the connection closes
      return sendReply(response, { ...reply, headers: { ...reply.headers, Connection: "close", ...(route?.cors ? CORS_HEADERS : {}) } }, requestId);
    }
    if (route) {
      const query = new URLSearchParams(queryAt < 0 ? "" : target.slice(queryAt + 1));
      const reply = await answer({ request, query, requestId, clientIp: clientIpOf(request, settings.trustProxy) }, route);
      // answered before its body all arrived (a 401, a 413), it says Connection: close and the connection ends with it (unread-body.ts)
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
    } else if (Object.hasOwn(apiReference, pathname) && request.method === "GET") {
      const file = apiReference[pathname]!;
      response.writeHead(200, { "Content-Type": file.contentType, ...file.headers }).end(file.body);
    } else if ((pathname === "/livez" || pathname === "/readyz") && request.method === "GET") {
      // the pod's own state only: every gateway pod shares the backends, so their health (/v1/health) must not take all of them out of rotation at once
      const ready = pathname === "/livez" || !leaving;
      response.writeHead(ready ? 200 : 503, { "Content-Type": "text/plain; charset=utf-8" }).end(ready ? "ok\n" : "stopping\n");
    } else if (pathname === "/metrics" && request.method === "GET") {
      const refused = metricsRefusal(request, settings.metricsToken);
      if (refused) return sendReply(response, errorReply(refused, requestId), requestId);
      // merged per scrape: backend metrics may be registered after the gateway started
      const exposed = Registry.merge([metrics.registry, serviceMetrics]);
      response.writeHead(200, { "Content-Type": exposed.contentType }).end(await exposed.metrics());
    } else {
      requestIds.set(request, requestId);
      connect(request, response);
    }
  }

  // a missing Host gets the JSON error from refusal(), where Node would answer an empty 400
  const server: Server = createServer({ requireHostHeader: false }, (request, response) => {
    const incomingId = request.headers["x-request-id"];
    const requestId = typeof incomingId === "string" && REQUEST_ID.test(incomingId) ? incomingId : randomUUID();
    servedInSpan(request, (span) => inRequestScope({ requestId, response }, () => handle(request, response, requestId, span))).catch((error: unknown) => {
      logger.error({ err: error, requestId }, "unhandled gateway error");
      if (!response.headersSent) sendReply(response, errorReply(error, requestId), requestId);
      else response.destroy();
    });
  });
  metrics.watch(server, budget);
  const limits = applyConnectionLimits(server, settings, (request, response, requestId) => {
    const reply = errorReply(new ServiceError("REQUEST_TIMEOUT", `The request body arrived slower than ${settings.minBodyBytesPerSecond} bytes per second.`), requestId);
    if (response.headersSent) return void request.socket.destroy();
    void sendReply(response, { ...reply, headers: { ...reply.headers, Connection: "close" } }, requestId).then(() => request.socket.destroySoon());
  });
  answerClientErrors(server, (line) => {
    metrics.observe("", "unparsed", line.status, 0);
    logger.info(line, "request");
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
    drain() {
      // Idle keep-alive connections are left to their keep-alive timeout, which clients anticipate (they
      // stop reusing a connection before the timeout the server advertises): closing one as its client
      // sends a request on it would reset that request. A connection used again gets its answer with
      // "Connection: close".
      leaving = true;
    },
    /** Stops accepting, lets in-flight requests finish (up to the timeout), then closes every connection. */
    async close() {
      leaving = true;
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
  // the address keys per-client rate limits: anything but an address (a forged 10 KB header) counts as the proxy's own
  const first = typeof forwarded === "string" ? forwarded.split(",", 1)[0].trim() : "";
  return isIP(first) ? first : (request.socket.remoteAddress ?? "");
}
