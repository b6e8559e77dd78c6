/**
 * Usage reports for POST /v1/collect and reading GET /v1/usage, for the
 * telemetry tests and bench:collect. Not a test file itself.
 */
import type { HttpResult } from "./key-flow.js";
import { waitFor } from "./wait.js";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

/** The environment of `services/main.ts all` with Kafka and Redis (and ADMIN_TOKEN), as the telemetry tests and bench:collect run it. */
export function kafkaModeEnv(
  settings: { port: string; dataDir: string; kafkaBrokers: string[]; redisUrl: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    HOST: "127.0.0.1",
    PORT: settings.port,
    GRPC_PORT: "0",
    DOCSERVICE_DATA_DIR: settings.dataDir,
    CONVERSION_POOL_SIZE: "1",
    KAFKA_BROKERS: settings.kafkaBrokers.join(","),
    REDIS_URL: settings.redisUrl,
    DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
    ...extra,
  };
}

/** Registers a license key through the admin route (ADMIN_TOKEN); throws unless it answers 201. */
export async function registerLicenseKey(base: string, customer: string): Promise<string> {
  const response = await fetch(`${base}/v1/admin/license-keys`, {
    method: "POST",
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify({ customer }),
  });
  if (response.status !== 201) throw new Error(`registering a license key for ${customer} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { licenseKey: string }).licenseKey;
}

/** A report of one event per document id, shaped like the reference client's (superdocVersion, browserInfo). */
export function report(documentIds: string[], options: { metadata?: Record<string, unknown>; at?: string } = {}): Record<string, unknown> {
  return {
    superdocVersion: "0.20.0",
    browserInfo: { userAgent: "node-test", currentUrl: "https://app.example.test/editor", hostname: "app.example.test", screenSize: { width: 1920, height: 1080 } },
    ...(options.metadata ? { metadata: options.metadata } : {}),
    events: documentIds.map((documentId) => ({ timestamp: options.at ?? new Date().toISOString(), documentId, documentCreatedAt: null })),
  };
}

export async function collect(base: string, body: unknown, licenseKey?: string): Promise<HttpResult> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (licenseKey !== undefined) headers["X-License-Key"] = licenseKey;
  const response = await fetch(`${base}/v1/collect`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

export async function usage(base: string, licenseKey: string, from: string, to: string, token = ADMIN_TOKEN, groupBy?: string): Promise<HttpResult> {
  const group = groupBy === undefined ? "" : `&groupBy=${encodeURIComponent(groupBy)}`;
  const response = await fetch(`${base}/v1/usage?licenseKey=${encodeURIComponent(licenseKey)}&from=${from}&to=${to}${group}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** Polls the usage API until `done` holds (the aggregator is asynchronous); returns the last answer. */
export async function usageWhen(
  base: string,
  licenseKey: string,
  range: { from: string; to: string },
  done: (body: any) => boolean,
  timeoutMs = 60_000,
): Promise<any> {
  let last: any;
  await waitFor(
    async () => {
      last = (await usage(base, licenseKey, range.from, range.to)).body;
      return done(last);
    },
    { what: `usage of ${licenseKey} to settle`, timeoutMs, intervalMs: 250 },
  );
  return last;
}

/** Today (UTC) as YYYY-MM-DD. */
export const today = () => new Date().toISOString().slice(0, 10);
