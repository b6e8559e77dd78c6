import type { Server } from "node:http";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { MemoryBudget } from "./memory-budget.js";

type Label = "method" | "route" | "status";

/** Prometheus metrics of the gateway, served on /metrics. */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter<Label>({
    name: "docservice_http_requests_total",
    help: "HTTP requests by route, method and status.",
    labelNames: ["method", "route", "status"],
    registers: [this.registry],
  });
  private readonly duration = new Histogram<Label>({
    name: "docservice_http_request_duration_seconds",
    help: "HTTP request latency by route, method and status.",
    labelNames: ["method", "route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** Requests received and not yet closed, answered or cut off: 0 whenever nothing runs. */
  readonly inFlight = new Gauge({
    name: "docservice_http_requests_in_flight",
    help: "HTTP requests being served.",
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The gateway's saturation, read at each scrape: open connections, and request bodies held against the memory budget. */
  watch(server: Server, budget: MemoryBudget): void {
    const registers = [this.registry];
    new Gauge({
      name: "docservice_http_connections_open",
      help: "Open client connections (HTTP_MAX_CONNECTIONS caps them).",
      registers,
      async collect() {
        this.set(await new Promise<number>((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count))));
      },
    });
    new Gauge({
      name: "docservice_http_body_bytes_in_flight",
      help: "Request bodies held in memory right now, as counted against the memory budget.",
      registers,
      collect() {
        this.set(budget.heldBytes);
      },
    });
    new Gauge({
      name: "docservice_http_body_bytes_budget",
      help: "The memory budget for request bodies (DOCSERVICE_MEMORY_BUDGET_MB); beyond it, large requests get 503.",
      registers,
      collect() {
        this.set(budget.limitBytes);
      },
    });
  }

  /** Label sets seen so far, so the hot path skips prom-client's per-call label hashing. */
  private readonly series = new Map<string, { requests: Counter.Internal; duration: Histogram.Internal<Label> }>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let series = this.series.get(key);
    if (!series) {
      const labels = { method, route, status: String(status) };
      series = { requests: this.requests.labels(labels), duration: this.duration.labels(labels) };
      this.series.set(key, series);
    }
    series.requests.inc();
    series.duration.observe(seconds);
  }
}
