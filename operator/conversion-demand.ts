/**
 * How many conversion pods' worth of work a DocService has right now: the
 * conversions in flight or waiting on all its conversion pods, over the
 * number of LibreOffice instances one pod runs. The conversion HPA aims at
 * 1/headroom of it per pod (operator/desired-state.ts), so a queue that builds
 * up adds pods before requests wait long, and CPU (bursty, and low while
 * LibreOffice waits on I/O) plays no part.
 */
export const CONVERSION_DEMAND_METRIC = "docservice_conversion_demand";

/** What one pod's /metrics says about its pool. */
export interface PoolLoad {
  waiting: number;
  inFlight: number;
  poolSize: number;
}

/** A pod to read: its /metrics address. */
export interface MetricsTarget {
  pod: string;
  url: string;
}

const SCRAPE_TIMEOUT_MS = 2_000;
/** Past this, a /metrics answer is not the platform's. */
const MAX_METRICS_BYTES = 1 << 20;

/** The value of each named gauge without labels in Prometheus' text format. */
export function gaugeValues(text: string, names: readonly string[]): Map<string, number> {
  const wanted = new Set(names);
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*) (\S+)/.exec(line);
    if (match && wanted.has(match[1]!)) values.set(match[1]!, Number(match[2]));
  }
  return values;
}

export function poolLoad(text: string): PoolLoad {
  const names = ["docservice_conversion_waiting", "docservice_conversion_in_flight", "docservice_conversion_pool_size"] as const;
  const values = gaugeValues(text, names);
  const missing = names.filter((name) => !Number.isFinite(values.get(name)));
  if (missing.length > 0) throw new Error(`not in its /metrics: ${missing.join(", ")}`);
  return { waiting: values.get(names[0])!, inFlight: values.get(names[1])!, poolSize: values.get(names[2])! };
}

/** Pods' worth of conversions: Σ(in flight + waiting) ÷ the mean pool size; 0 without pods. */
export function demandInPods(loads: readonly PoolLoad[]): number {
  if (loads.length === 0) return 0;
  const work = loads.reduce((sum, load) => sum + load.inFlight + load.waiting, 0);
  const meanPool = loads.reduce((sum, load) => sum + load.poolSize, 0) / loads.length;
  return meanPool > 0 ? work / meanPool : 0;
}

async function readPoolLoad(target: MetricsTarget, token: string): Promise<PoolLoad> {
  const response = await fetch(target.url, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`${target.pod}: /metrics answered ${response.status}`);
  // read up to the bound, whatever Content-Length says (a chunked answer has none)
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of response.body ?? []) {
    bytes += chunk.byteLength;
    if (bytes > MAX_METRICS_BYTES) {
      await response.body?.cancel();
      throw new Error(`${target.pod}: /metrics is over ${MAX_METRICS_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return poolLoad(Buffer.concat(chunks).toString("utf8"));
}

/**
 * The demand over the pods that answer. A pod that does not (starting,
 * stopping) is left out rather than failing the metric; none answering is an
 * error, so the HPA keeps the replicas it has instead of acting on nothing.
 */
export async function conversionDemand(targets: readonly MetricsTarget[], token: string): Promise<number> {
  if (targets.length === 0) return 0;
  // the timeout's signal covers reading the body too
  const results = await Promise.allSettled(targets.map((target) => readPoolLoad(target, token)));
  const loads = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  if (loads.length === 0) {
    const reasons = results.map((result) => (result.status === "rejected" ? (result.reason as Error).message : "")).filter(Boolean);
    throw new Error(`no conversion pod answered: ${reasons.join("; ")}`);
  }
  return demandInPods(loads);
}
