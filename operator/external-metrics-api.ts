/**
 * The external metrics API (external.metrics.k8s.io/v1beta1) served by the
 * operator, which HPAs read through the API server: the API server's
 * aggregation layer forwards a request here once it has authenticated and
 * authorised its caller, and proves that with its front-proxy client
 * certificate (signed by the request-header CA, one of the allowed names).
 * Nothing else may read it; health probes (no certificate) get /healthz only.
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { formatQuantity } from "./quantity.js";

export const GROUP_VERSION = "external.metrics.k8s.io/v1beta1";
const PREFIX = `/apis/${GROUP_VERSION}`;
/** Bounds of what one caller may hold: the API server keeps a few connections, probes one. */
const MAX_CONNECTIONS = 64;
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** A metric, computed per request from the namespace and the HPA's metric selector (equality terms only). */
export interface ExternalMetric {
  name: string;
  value(namespace: string, selector: Record<string, string>): Promise<number>;
}

export interface ExternalMetricsApiOptions {
  host: string;
  port: number;
  /** The serving certificate and key (PEM), which the APIService's caBundle vouches for. */
  cert: string;
  key: string;
  /** The request-header CA and allowed names, from kube-system/extension-apiserver-authentication. */
  clientCa: string;
  allowedNames: string[];
  metrics: ExternalMetric[];
  log: (message: string, fields?: object) => void;
}

/** A Kubernetes Status, the body the API server passes on for an error. */
function status(response: ServerResponse, code: number, reason: string, message: string): void {
  send(response, code, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code });
}

function send(response: ServerResponse, code: number, body: object): void {
  const text = JSON.stringify(body);
  response.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  response.end(text);
}

/** `a=b,c==d` as HPAs send a metric selector's matchLabels; undefined for anything else (sets, inequality). */
export function parseEqualitySelector(text: string): Record<string, string> | undefined {
  const selector: Record<string, string> = {};
  if (text === "") return selector;
  for (const term of text.split(",")) {
    const match = /^\s*([\w./-]+)\s*==?\s*([\w.-]*)\s*$/.exec(term);
    if (!match) return undefined;
    selector[match[1]!] = match[2]!;
  }
  return selector;
}

function fromApiServer(request: IncomingMessage, allowedNames: string[]): boolean {
  const socket = request.socket as TLSSocket;
  if (!socket.authorized) return false;
  const commonName = socket.getPeerCertificate().subject?.CN;
  return allowedNames.length === 0 || (typeof commonName === "string" && allowedNames.includes(commonName));
}

export async function startExternalMetricsApi(options: ExternalMetricsApiOptions): Promise<Server> {
  const metrics = new Map(options.metrics.map((metric) => [metric.name, metric]));
  const resources = {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: GROUP_VERSION,
    resources: options.metrics.map((metric) => ({ name: metric.name, singularName: "", namespaced: true, kind: "ExternalMetricValueList", verbs: ["get"] })),
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = URL.parse(request.url ?? "/", "https://localhost");
    if (!url) return status(response, 400, "BadRequest", "not a request target");
    if (url.pathname === "/healthz" || url.pathname === "/livez" || url.pathname === "/readyz") {
      response.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
      return;
    }
    if (!fromApiServer(request, options.allowedNames)) return status(response, 401, "Unauthorized", "only the API server's front proxy may call this API");
    if (request.method !== "GET") return status(response, 405, "MethodNotAllowed", `${request.method} is not supported`);
    if (url.pathname === PREFIX) return send(response, 200, resources);
    const match = /^\/namespaces\/([a-z0-9-]{1,63})\/([\w-]{1,128})$/.exec(url.pathname.slice(PREFIX.length));
    if (!url.pathname.startsWith(`${PREFIX}/`) || !match) return status(response, 404, "NotFound", `${url.pathname} is not served here`);
    const [, namespace, name] = match as unknown as [string, string, string];
    const metric = metrics.get(name);
    if (!metric) return status(response, 404, "NotFound", `no external metric ${name}`);
    const selector = parseEqualitySelector(url.searchParams.get("labelSelector") ?? "");
    if (!selector) return status(response, 400, "BadRequest", "labelSelector: only key=value terms are supported");
    try {
      const value = await metric.value(namespace, selector);
      send(response, 200, {
        kind: "ExternalMetricValueList",
        apiVersion: GROUP_VERSION,
        metadata: {},
        items: [{ metricName: name, metricLabels: selector, timestamp: new Date().toISOString(), value: formatQuantity(value) }],
      });
    } catch (error) {
      options.log("external metric unavailable", { metric: name, namespace, selector, error: (error as Error).message });
      status(response, 503, "ServiceUnavailable", `${name}: ${(error as Error).message}`);
    }
  };

  const server = createServer(
    { cert: options.cert, key: options.key, ca: options.clientCa, requestCert: true, rejectUnauthorized: false, minVersion: "TLSv1.2" },
    (request, response) => {
      handle(request, response).catch((error: unknown) => {
        options.log("external metrics request failed", { error: (error as Error).message });
        if (!response.headersSent) status(response, 500, "InternalError", "internal error");
      });
    },
  );
  server.maxConnections = MAX_CONNECTIONS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
