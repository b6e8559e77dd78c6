import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Prometheus metrics of the gateway, served on /metrics. */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: "docservice_http_requests_total",
    help: "HTTP requests by route, method and status.",
    labelNames: ["method", "route", "status"],
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: "docservice_http_request_duration_seconds",
    help: "HTTP request latency by route, method and status.",
    labelNames: ["method", "route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  }
}
