import type { IncomingMessage } from "node:http";
import { context, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import { asServiceError } from "../core/errors.js";
import { contextFrom, isTracing, SpanKind, tracer } from "../core/tracing.js";

export type { Span };

/**
 * Serves a request inside its server span, when tracing: a child of the
 * caller's span when it sent `traceparent` (W3C trace context), a new trace
 * otherwise. Named by its method until its route is known; `serve` ends it.
 */
export function servedInSpan<T>(request: IncomingMessage, serve: (span?: Span) => Promise<T>): Promise<T> {
  if (!isTracing()) return serve();
  const parent = contextFrom(request.headers);
  const method = request.method ?? "";
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { "http.request.method": method } }, parent);
  return context.with(trace.setSpan(parent, span), () => serve(span));
}

/** The error code of a request that failed, on its span (for 4xx too, which leave the span's status alone). */
export function recordRequestError(error: unknown): void {
  trace.getActiveSpan()?.setAttribute("error.type", asServiceError(error).code);
}

/** `GET /v1/usage`: the route (or what the gateway calls an unknown path), never the raw path with its query. */
export function nameRequestSpan(span: Span, method: string, route: string): void {
  span.updateName(`${method} ${route}`);
  span.setAttribute("http.route", route);
}

/** The answer's status on the span; a 5xx (and a client gone before its answer, 499, is not) marks it failed, as for any server span. */
export function endRequestSpan(span: Span, status: number): void {
  span.setAttribute("http.response.status_code", status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
