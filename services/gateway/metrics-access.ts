import type { IncomingMessage } from "node:http";
import { constantTimeEquals } from "../access/constant-time.js";
import { ServiceError } from "../core/errors.js";

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

/**
 * Who may read /metrics. With METRICS_TOKEN set, a caller that sends it as a
 * bearer token (Prometheus: the PodMonitor's authorization, which the
 * operator sets); without it, callers on this machine only: the listener
 * binds every interface, and what /metrics tells (routes, rates, certificate
 * expiry) is not for whoever can reach the port. Returns the error to answer
 * with, or undefined when the caller may read.
 */
export function metricsRefusal(request: IncomingMessage, token: string | undefined): ServiceError | undefined {
  if (token === undefined) {
    if (LOOPBACK.has(request.socket.remoteAddress ?? "")) return undefined;
    return new ServiceError("UNAUTHENTICATED", "/metrics answers other machines only with METRICS_TOKEN set, and its value as a bearer token.");
  }
  const presented = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "")?.[1];
  return presented !== undefined && constantTimeEquals(presented, token) ? undefined : new ServiceError("UNAUTHENTICATED", "/metrics needs the metrics token as a bearer token.");
}
