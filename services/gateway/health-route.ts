import { probe, type HealthCheck, type HealthReport } from "../core/health.js";
import { VERSION } from "../core/version.js";
import type { Route } from "../contracts/route.js";

const PROBE_TIMEOUT_MS = 2000;

const healthReportSchema = {
  type: "object",
  required: ["status", "latencyMs"],
  properties: {
    status: { enum: ["ok", "down"] },
    latencyMs: { type: "number" },
    error: { type: "string", description: "Why the backend is down." },
  },
};

/** How many requests of a kind the platform works on at once, where this gateway knows (its backends run in-process). */
export interface CapacityHints {
  convert?: number;
  sign?: number;
}

/** A backend that is down is probed again at the next request; a client polling health need not come back sooner. */
const PROBE_RETRY_AFTER_SECONDS = 5;

/**
 * GET /v1/health: 200 when every backend answers, 503 with the same body
 * when one does not, and 503 `stopping` without probing anything once the
 * process is leaving (`leaving()`), so that it is taken out of rotation.
 */
export function healthRoute(backends: Record<string, HealthCheck>, startedAt: number, capacity: CapacityHints = {}, leaving: () => boolean = () => false): Route {
  return {
    method: "GET",
    path: "/v1/health",
    operationId: "health",
    summary: "Status, version, uptime and the health of each backend service.",
    successStatus: 200,
    responseSchema: {
      type: "object",
      required: ["status", "version", "uptimeSeconds", "backends"],
      properties: {
        status: { enum: ["ok", "degraded", "stopping"] },
        version: { type: "string" },
        uptimeSeconds: { type: "integer" },
        backends: { type: "object", additionalProperties: healthReportSchema },
        capacity: {
          type: "object",
          description: "How many conversions and signings the platform works on at once, when the gateway knows (embedded mode): a client's useful concurrency.",
          properties: { convert: { type: "integer", minimum: 1 }, sign: { type: "integer", minimum: 1 } },
        },
      },
    },
    errors: { 503: "At least one backend is down (the body, the same report with status degraded, says which), or this process is stopping (status stopping): send requests elsewhere." },
    successBodyOn: [503],
    async handle() {
      const uptimeSeconds = Math.floor((Date.now() - startedAt) / 1000);
      if (leaving()) {
        return { status: 503, headers: { "Retry-After": String(PROBE_RETRY_AFTER_SECONDS) }, body: { status: "stopping", version: VERSION, uptimeSeconds, backends: {}, capacity } };
      }
      const names = Object.keys(backends);
      const reports = await Promise.all(names.map((name) => probe(backends[name], PROBE_TIMEOUT_MS)));
      const byName: Record<string, HealthReport> = Object.fromEntries(names.map((name, i) => [name, reports[i]]));
      const healthy = reports.every((r) => r.status === "ok");
      return {
        status: healthy ? 200 : 503,
        ...(healthy ? {} : { headers: { "Retry-After": String(PROBE_RETRY_AFTER_SECONDS) } }),
        body: {
          status: healthy ? "ok" : "degraded",
          version: VERSION,
          uptimeSeconds,
          backends: byName,
          capacity,
        },
      };
    },
  };
}
