/**
 * How many conversion pods' worth of work a DocService has: the mean number
 * of conversions its conversion pods held since the operator last read them,
 * over the number of LibreOffice instances one pod runs. The conversion HPA
 * aims at 1/headroom of it per pod (operator/desired-state.ts), so a queue
 * that builds up adds pods before requests wait long, and CPU (bursty, and
 * low while LibreOffice waits on I/O) plays no part. A mean, not the moment:
 * a pod with one instance is at any moment idle or full, and at half its
 * capacity every other reading would ask for a second pod.
 */
export const CONVERSION_DEMAND_METRIC = "docservice_conversion_demand";

/** What one pod's /metrics says about its pool. */
export interface PoolLoad {
  waiting: number;
  inFlight: number;
  poolSize: number;
  /** docservice_conversion_held_seconds_total; absent from a pod of a version without it. */
  heldSeconds?: number;
}

/** A pod to read: its /metrics address. */
export interface MetricsTarget {
  pod: string;
  /** This run of the pod's container (its uid and restart count): a restart counts from 0 again. */
  run: string;
  url: string;
}

const HELD_SECONDS = "docservice_conversion_held_seconds_total";
const SCRAPE_TIMEOUT_MS = 2_000;
/**
 * The mean is taken since the newest earlier reading at least MIN_SPAN_MS old
 * (the HPA reads every 15 s; a reading just before, by another client, would
 * make a mean of a moment), and at most MAX_SPAN_MS old (older is stale). A
 * reading is kept only MIN_SPAN_MS after the last one kept, so a pod has at
 * most MAX_SPAN_MS / MIN_SPAN_MS of them however often the metric is read.
 */
const MIN_SPAN_MS = 5_000;
const MAX_SPAN_MS = 60_000;
/** Past this, a /metrics answer is not the platform's. */
const MAX_METRICS_BYTES = 1 << 20;

/** The value of each named series without labels in Prometheus' text format. */
export function sampleValues(text: string, names: readonly string[]): Map<string, number> {
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
  const values = sampleValues(text, [...names, HELD_SECONDS]);
  const missing = names.filter((name) => !Number.isFinite(values.get(name)));
  if (missing.length > 0) throw new Error(`not in its /metrics: ${missing.join(", ")}`);
  const heldSeconds = values.get(HELD_SECONDS);
  return {
    waiting: values.get(names[0])!,
    inFlight: values.get(names[1])!,
    poolSize: values.get(names[2])!,
    ...(heldSeconds !== undefined && Number.isFinite(heldSeconds) ? { heldSeconds } : {}),
  };
}

/** One pod's conversions held, on average or at the moment, and the instances it runs. */
export interface PodDemand {
  held: number;
  poolSize: number;
}

/** Pods' worth of conversions: Σ held ÷ the mean pool size; 0 without pods. */
export function demandInPods(pods: readonly PodDemand[]): number {
  if (pods.length === 0) return 0;
  const work = pods.reduce((sum, pod) => sum + pod.held, 0);
  const meanPool = pods.reduce((sum, pod) => sum + pod.poolSize, 0) / pods.length;
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

interface Reading {
  atMs: number;
  heldSeconds: number;
}

/**
 * The demand over the pods that answer, each pod's the mean it held since an
 * earlier reading. A pod read for the first time (or restarted) or without
 * the counter counts what it holds at the moment. A pod that
 * does not answer (starting, stopping) is left out rather than failing the
 * metric; none answering is an error, so the HPA keeps the replicas it has
 * instead of acting on nothing.
 */
export class ConversionDemand {
  private readonly readings = new Map<string, Reading[]>();

  constructor(private readonly nowMs: () => number = () => performance.now()) {}

  async read(targets: readonly MetricsTarget[], token: string): Promise<number> {
    if (targets.length === 0) return 0;
    // the timeout's signal covers reading the body too
    const results = await Promise.allSettled(targets.map((target) => readPoolLoad(target, token)));
    const atMs = this.nowMs();
    this.forgetOlderThan(atMs - MAX_SPAN_MS);
    const pods = results.flatMap((result, i) => (result.status === "fulfilled" ? [{ held: this.held(targets[i]!.run, result.value, atMs), poolSize: result.value.poolSize }] : []));
    if (pods.length === 0) {
      const reasons = results.map((result) => (result.status === "rejected" ? (result.reason as Error).message : "")).filter(Boolean);
      throw new Error(`no conversion pod answered: ${reasons.join("; ")}`);
    }
    return demandInPods(pods);
  }

  /** The pod's mean held since the newest reading old enough; this reading kept for the next if the last kept is that old. */
  private held(run: string, load: PoolLoad, atMs: number): number {
    const now = load.inFlight + load.waiting;
    if (load.heldSeconds === undefined) return now;
    const earlier = this.readings.get(run) ?? [];
    const since = earlier.findLast((reading) => atMs - reading.atMs >= MIN_SPAN_MS);
    if (earlier.length === 0 || since === earlier.at(-1)) this.readings.set(run, [...earlier, { atMs, heldSeconds: load.heldSeconds }]);
    return since ? ((load.heldSeconds - since.heldSeconds) * 1000) / (atMs - since.atMs) : now;
  }

  private forgetOlderThan(oldestMs: number): void {
    for (const [run, readings] of this.readings) {
      const kept = readings.filter((reading) => reading.atMs >= oldestMs);
      if (kept.length > 0) this.readings.set(run, kept);
      else this.readings.delete(run);
    }
  }
}
