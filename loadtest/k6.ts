/**
 * Runs one k6 scenario (loadtest/scenarios/*.js) at a constant arrival rate
 * and reads its --summary-export: p95, errors, checks, dropped iterations,
 * which thresholds were crossed, and the CPU the measured platform (a process
 * tree, or a pod) used while the load ran (between the scenario's setup and
 * teardown markers, so k6's own start-up and shut-down are left out).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cpuSeconds, descendants, measureCpu, type CpuUse } from "../bench/support/processes.js";

export const SCENARIO_DIR = fileURLToPath(new URL("./scenarios/", import.meta.url));

export type Protocol = "http" | "grpc";

export interface K6Step {
  /** File in loadtest/scenarios. */
  script: string;
  protocol: Protocol;
  /** Requests per second (constant arrival rate). */
  rate: number;
  durationS: number;
  p95Ms: number;
  /** Further -e variables for the script (BASE_URL, API_KEY, fixtures…). */
  env: Record<string, string>;
}

export interface K6Result {
  /** k6's exit code: 0, or 99 when a threshold was crossed. */
  exitCode: number;
  /** Thresholds crossed, e.g. "http_req_duration p(95)<50 (p(95) = 61.2 ms)". */
  breaches: string[];
  p95Ms: number;
  /** Share of failed requests (HTTP) or failed checks (gRPC). */
  errorRate: number;
  requests: number;
  dropped: number;
  /** CPU of what is measured (the platform's process tree, or one pod) while the load ran, in % of one core. */
  platformCpuPercent: number;
  /** CPU of k6 itself over the same interval, in % of one core (it shares the machine). */
  k6CpuPercent: number;
  /** CPU of every process outside this run's tree (not the platform, not k6: in a cluster, the other pods too) over the same interval, in % of one core. */
  foreignCpuPercent: number;
}

/** CPU seconds so far of `root` and every live descendant. */
export function treeCpuSeconds(root: number): number {
  return [root, ...descendants(root)].reduce((sum, pid) => sum + cpuSeconds(pid), 0);
}

/** "v1.8.1" from `k6 version`. */
export function k6Version(binary: string): string {
  const text = execFileSync(binary, ["version"], { encoding: "utf8" });
  return /\bv\d+\.\d+\.\d+\S*/.exec(text)?.[0] ?? text.trim();
}

const running = new Set<ChildProcess>();
process.on("exit", () => running.forEach((child) => child.kill("SIGTERM")));

interface CpuMark {
  atMs: number;
  platformS: number;
  k6S: number;
}

/** Runs one step of load, `platformCpuSeconds` telling the CPU seconds used so far by what is measured; rejects when k6 fails for another reason than a crossed threshold. */
export async function runK6(binary: string, step: K6Step, platformCpuSeconds: () => number): Promise<K6Result> {
  const dir = mkdtempSync(join(tmpdir(), "docservice-k6-"));
  const summaryFile = join(dir, "summary.json");
  const variables = { ...step.env, RATE: String(step.rate), DURATION: `${step.durationS}s`, P95_MS: String(step.p95Ms) };
  const args = ["run", "--quiet", "--no-color", "--no-usage-report", "--summary-export", summaryFile];
  for (const [name, value] of Object.entries(variables)) args.push("-e", `${name}=${value}`);
  args.push(join(SCENARIO_DIR, step.script));
  try {
    const child = spawn(binary, args, { cwd: SCENARIO_DIR, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    let output = "";
    const marks: Partial<Record<"start" | "end", CpuMark>> = {};
    const mark = (): CpuMark => ({ atMs: performance.now(), platformS: platformCpuSeconds(), k6S: cpuSeconds(child.pid!) });
    let machine: (() => CpuUse) | undefined;
    let foreignCpuS = 0;
    const watch = (chunk: Buffer) => {
      output += chunk;
      if (!marks.start && output.includes("LOADTEST_LOAD_START")) {
        marks.start = mark();
        machine = measureCpu();
      }
      if (!marks.end && output.includes("LOADTEST_LOAD_END")) {
        marks.end = mark();
        foreignCpuS = machine?.().foreignCpuS ?? 0;
      }
    };
    child.stdout!.on("data", watch);
    child.stderr!.on("data", watch);
    const exitCode = await new Promise<number>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    });
    running.delete(child);
    if (exitCode !== 0 && exitCode !== 99) throw new Error(`k6 ${step.script} exited with ${exitCode}:\n${output.slice(-4000)}`);
    if (!marks.start || !marks.end) throw new Error(`k6 ${step.script} printed no load markers:\n${output.slice(-4000)}`);
    const seconds = (marks.end.atMs - marks.start.atMs) / 1000;
    return {
      ...readSummary(summaryFile, step.protocol),
      exitCode,
      platformCpuPercent: ((marks.end.platformS - marks.start.platformS) / seconds) * 100,
      k6CpuPercent: ((marks.end.k6S - marks.start.k6S) / seconds) * 100,
      foreignCpuPercent: (foreignCpuS / seconds) * 100,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface SummaryMetric {
  [stat: string]: number | Record<string, boolean> | undefined;
  thresholds?: Record<string, boolean>;
}

/** The legacy --summary-export format: metrics by name; `thresholds` maps each expression to whether it was crossed. */
function readSummary(file: string, protocol: Protocol): Omit<K6Result, "exitCode" | "platformCpuPercent" | "k6CpuPercent" | "foreignCpuPercent"> {
  const metrics = (JSON.parse(readFileSync(file, "utf8")) as { metrics: Record<string, SummaryMetric> }).metrics;
  const stat = (metric: string, name: string): number => {
    const value = metrics[metric]?.[name];
    return typeof value === "number" ? value : 0;
  };
  const duration = protocol === "http" ? "http_req_duration" : "grpc_req_duration";
  const breaches: string[] = [];
  for (const [metric, values] of Object.entries(metrics)) {
    for (const [expression, crossed] of Object.entries(values.thresholds ?? {})) {
      if (crossed) breaches.push(`${metric} ${expression} (${describe(metric, values)})`);
    }
  }
  const checksFailed = 1 - (metrics.checks ? stat("checks", "value") : 1);
  return {
    breaches,
    p95Ms: stat(duration, "p(95)"),
    errorRate: protocol === "http" ? Math.max(stat("http_req_failed", "value"), checksFailed) : checksFailed,
    requests: stat("iterations", "count"),
    dropped: stat("dropped_iterations", "count"),
  };
}

function describe(metric: string, values: SummaryMetric): string {
  if (typeof values["p(95)"] === "number") return `p(95) = ${values["p(95)"].toFixed(1)} ms`;
  if (typeof values.value === "number") return `rate = ${(values.value * 100).toFixed(2)} %`;
  if (typeof values.count === "number") return `count = ${values.count}`;
  return metric;
}
