/**
 * Load tests with k6 against one replica of every component: by default the
 * platform (`services/main.ts all`, embedded mode) in its own process on this
 * machine; with --cluster, a DocService on the test node, one pod per
 * component (loadtest/cluster-target.ts).
 *
 *   node --import tsx loadtest/run.ts check   every scenario for a few seconds at a low rate;
 *                                             exits 1 when any threshold is crossed (CI)
 *   node --import tsx loadtest/run.ts size [--cluster]
 *                                             (npm run loadtest:size) each component's capacity:
 *                                             the highest rate its main route sustains within its
 *                                             p95 target, into loadtest/sizing-profile.json
 *
 * Environment: LOADTEST_SCENARIOS (check: comma-separated scenario names),
 * LOADTEST_P95_MS (replaces every p95 target), LOADTEST_DURATION_S (check:
 * seconds per scenario, 3), LOADTEST_STEP_S (size: seconds per step, 5;
 * conversion's take twice that), LOADTEST_BUDGET_S (size: measuring time for
 * the whole search, 600, plus up to as long again waiting for a quiet
 * machine), LOADTEST_PROFILE (size: where to write the profile). See
 * loadtest/README.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir, totalmem } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { waitQuiet } from "../bench/support/processes.js";
import type { ComponentName } from "../operator/crd.js";
import type { ComponentCapacity, SizingProfile } from "../operator/sizing.js";
import { startClusterTarget } from "./cluster-target.js";
import { startEmbeddedTarget } from "./embedded-target.js";
import { k6Version, runK6, type K6Result } from "./k6.js";
import { SCENARIOS, scenarioNamed, type Scenario, type Sizing } from "./scenarios.js";
import type { Target } from "./target.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DEFAULT_PROFILE = join(ROOT, "loadtest", "sizing-profile.json");

const positive = z.coerce.number().positive();
/** The runner's settings (header comment), checked once. */
const settings = (() => {
  const parsed = z
    .object({
      LOADTEST_SCENARIOS: z.string().optional(),
      LOADTEST_P95_MS: positive.optional(),
      LOADTEST_DURATION_S: positive.default(3),
      LOADTEST_STEP_S: positive.default(5),
      LOADTEST_BUDGET_S: positive.default(600),
      LOADTEST_PROFILE: z.string().optional(),
    })
    .safeParse(process.env);
  if (!parsed.success) throw new Error(z.prettifyError(parsed.error));
  return parsed.data;
})();

function p95Target(scenario: Scenario): number {
  return settings.LOADTEST_P95_MS ?? scenario.p95Ms;
}

/** A step's k6 result, with the measured component's memory at its end where it has a pod of its own. */
interface StepResult extends K6Result {
  memoryMiB?: number;
}

async function step(target: Target, scenario: Scenario, rate: number, durationS: number, component?: ComponentName): Promise<StepResult> {
  const p95Ms = p95Target(scenario);
  // Enough virtual users for the rate at the p95 target, more on demand.
  const vus = Math.ceil((rate * p95Ms) / 1000) + 2;
  const result = await runK6(
    target.k6,
    {
      script: scenario.script,
      protocol: scenario.protocol,
      rate,
      durationS,
      p95Ms,
      env: { ...target.env(component), ...scenario.env, VUS: String(vus), MAX_VUS: String(3 * vus + 10) },
    },
    () => target.cpuSeconds(component),
  );
  return component && target.memoryMiB ? { ...result, memoryMiB: target.memoryMiB(component) } : result;
}

function line(scenario: Scenario, rate: number, result: StepResult, verdict: string): string {
  return (
    `${scenario.name.padEnd(30)} ${`${rate}/s`.padStart(9)}  p95 ${result.p95Ms.toFixed(1).padStart(7)} ms (< ${p95Target(scenario)})` +
    `  errors ${(result.errorRate * 100).toFixed(2)} %  requests ${result.requests}  dropped ${result.dropped}` +
    `  CPU measured ${result.platformCpuPercent.toFixed(0)} %, k6 ${result.k6CpuPercent.toFixed(0)} %, others ${result.foreignCpuPercent.toFixed(0)} %` +
    `${result.memoryMiB === undefined ? "" : `  memory ${result.memoryMiB} MiB`}  ${verdict}`
  );
}

/** Every scenario at its check rate; the names of those whose thresholds were crossed. */
async function check(target: Target): Promise<string[]> {
  const names = settings.LOADTEST_SCENARIOS ? settings.LOADTEST_SCENARIOS.split(",").map((n) => n.trim()) : SCENARIOS.map((s) => s.name);
  const durationS = settings.LOADTEST_DURATION_S;
  const failed: string[] = [];
  for (const scenario of names.map(scenarioNamed)) {
    const result = await step(target, scenario, scenario.checkRate, durationS);
    const passed = result.exitCode === 0;
    console.log(line(scenario, scenario.checkRate, result, passed ? "ok" : `THRESHOLD CROSSED: ${result.breaches.join("; ")}`));
    if (!passed) failed.push(scenario.name);
  }
  return failed;
}

/** Waits until what is measured is (nearly) idle: a step past capacity leaves a queue behind. */
async function settle(target: Target, component?: ComponentName): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const before = target.cpuSeconds(component);
    await sleep(500);
    if (target.cpuSeconds(component) - before < 0.05) return; // under 10 % of one core
  }
}

/** Rates below 10/s to a tenth, above to a whole request. */
function roundRate(rate: number): number {
  return rate < 10 ? Math.max(0.1, Math.round(rate * 10) / 10) : Math.round(rate);
}

/** A step within the p95 target, under 1 % errors, with (nearly) every planned request sent. */
function sustained(result: K6Result, rate: number, durationS: number): boolean {
  return result.exitCode === 0 && result.dropped <= Math.max(1, 0.01 * rate * durationS);
}

function shortfall(result: K6Result): string {
  return `does not hold: ${result.breaches.length ? result.breaches.join("; ") : `${result.dropped} requests dropped`}`;
}

interface Capacity {
  rate: number;
  result: StepResult;
  /** False when the time ran out before any step failed: the rate is a lower bound. */
  bounded: boolean;
}

/** Other processes on the machine took more than this (% of one core) during a failing step: it is run again, once. */
const BUSY_MACHINE_PERCENT = 25;

/**
 * The sizing run's time: LOADTEST_BUDGET_S of measuring, shared out among the
 * components, plus up to as long again waiting for other processes on the
 * machine to calm down (which does not count against the measuring time).
 */
class Budget {
  private readonly started = Date.now();
  private waitedMs = 0;
  constructor(readonly measuringMs: number) {}

  /** Measuring time used so far. */
  spentMs(): number {
    return Date.now() - this.started - this.waitedMs;
  }

  /** Waits (at most a minute, and only while waiting time is left) until other processes leave the machine nearly idle. */
  async waitQuiet(): Promise<void> {
    const timeoutMs = Math.min(60_000, this.measuringMs - this.waitedMs);
    if (timeoutMs <= 0) return;
    const began = Date.now();
    const quiet = await waitQuiet({ maxBusy: BUSY_MACHINE_PERCENT / 200, windowMs: 1000, timeoutMs });
    this.waitedMs += Date.now() - began;
    console.log(`  machine ${quiet.quiet ? "quiet" : "still busy"} after ${((Date.now() - began) / 1000).toFixed(0)} s (${(quiet.busy * 100).toFixed(0)} % of all cores busy)`);
  }
}

/**
 * The highest rate that holds: after a warm-up at the start rate, doubling
 * from it until a step fails, then bisecting between the last passing and the
 * first failing rate until they are within 10 %, or the time is up. A step
 * that fails while other processes loaded the machine is repeated once, when
 * the machine is quiet again (or after a minute).
 */
async function capacity(target: Target, sizing: Sizing, budget: Budget, shareMs: number): Promise<Capacity | undefined> {
  const scenario = scenarioNamed(sizing.scenario);
  const durationS = settings.LOADTEST_STEP_S * sizing.stepFactor;
  const deadline = budget.spentMs() + shareMs;
  let best: Omit<Capacity, "bounded"> | undefined;
  let failing: number | undefined;
  let rate = sizing.startRate;
  const { component } = sizing;
  // a step holds when k6's thresholds do and, where the target can tell, the component kept up with what k6 cannot see
  const run = async (): Promise<{ result: StepResult; passed: boolean; verdict: string }> => {
    const result = await step(target, scenario, rate, durationS, component);
    const behind = await target.fellBehind?.(component, result.requests * sizing.unitsPerRequest);
    const passed = sustained(result, rate, durationS) && behind === undefined;
    return { result, passed, verdict: passed ? "holds" : behind && sustained(result, rate, durationS) ? `does not hold: ${behind}` : shortfall(result) };
  };
  const warmUp = await step(target, scenario, rate, Math.min(durationS, 3), component);
  await target.fellBehind?.(component, warmUp.requests * sizing.unitsPerRequest);
  console.log(line(scenario, rate, warmUp, "warm-up"));
  await settle(target, component);
  // A step costs its duration plus k6's start-up and the settling after it.
  while (budget.spentMs() + (durationS + 3) * 1000 <= deadline || best === undefined) {
    let { result, passed, verdict } = await run();
    if (!passed && target.sharesMachine && result.foreignCpuPercent > BUSY_MACHINE_PERCENT) {
      console.log(line(scenario, rate, result, `${verdict}; machine busy, again`));
      await settle(target, component);
      await budget.waitQuiet();
      ({ result, passed, verdict } = await run());
    }
    console.log(line(scenario, rate, result, verdict));
    await settle(target, component);
    if (passed) best = { rate, result };
    else failing = rate;
    if (best === undefined && rate <= 0.1) return undefined;
    const next = best === undefined ? roundRate(rate / 2) : failing === undefined ? roundRate(rate * 2) : roundRate((best.rate + failing) / 2);
    if (failing !== undefined && best !== undefined && (failing - best.rate <= 0.1 * best.rate || next === best.rate || next === failing)) break;
    rate = next;
  }
  return best && { ...best, bounded: failing !== undefined };
}

/** The profile's `method`: how, where and with what the capacities were measured. */
function describeMethod(target: Target, run: { minutes: number; foreign: number[]; lowerBounds: string[] }): string {
  const stepS = settings.LOADTEST_STEP_S;
  const longer = target.sizings.filter((s) => s.stepFactor !== 1).map((s) => `${s.component} ${s.stepFactor * stepS} s`);
  const targets = target.sizings.map((s) => `${s.component} ${p95Target(scenarioNamed(s.scenario))} ms`).join(", ");
  const routes = target.sizings.map((s) => `${s.component} ${s.route ?? scenarioNamed(s.scenario).route}`).join("; ");
  const others = `${Math.round(run.foreign.reduce((a, b) => a + b, 0) / run.foreign.length)} % of one core on average (at most ${Math.round(Math.max(...run.foreign))} %)`;
  return (
    `${target.command} (${run.minutes.toFixed(1)} min) on ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? "unknown CPU"}, ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB), Node ${process.version}, k6 ${k6Version(target.k6)} on the same machine, against ${target.description}: ` +
    `per component (${routes}), a 3 s warm-up, ` +
    `then k6 constant-arrival-rate steps of ${stepS} s${longer.length ? ` (${longer.join(", ")})` : ""}, doubling the rate then bisecting to within 10 %; ` +
    `capacity = the highest rate with p95 under the target, under 1 % errors and failed checks and under 1 % dropped iterations` +
    (target.sharesMachine
      ? ` (a step failing while other processes took over ${BUSY_MACHINE_PERCENT} % of a core was repeated once the machine was quiet, or after a minute)`
      : ", the aggregator's within 5 s of the step's end applied by it to Redis") +
    `; p95 targets: ${targets}; telemetryAggregator counts events/s (10 per report); cpuPercentAtCapacity = CPU time of ` +
    `${target.sharesMachine ? "the platform's process tree (LibreOffice included)" : "the component's pod (LibreOffice included)"} during that step, in % of one core; ` +
    `other processes on the machine${target.sharesMachine ? "" : " (the other pods, Kafka, Redis, the node's own)"} used ${others} during those steps` +
    (run.lowerBounds.length ? `; lower bounds only (the time ran out before a step failed): ${run.lowerBounds.join(", ")}.` : ".")
  );
}

async function size(target: Target): Promise<SizingProfile> {
  const started = Date.now();
  const measuredAt = new Date(started).toISOString();
  const budget = new Budget(settings.LOADTEST_BUDGET_S * 1000);
  const components: SizingProfile["components"] = {};
  const foreign: number[] = [];
  const lowerBounds: string[] = [];
  for (const [index, sizing] of target.sizings.entries()) {
    const scenario = scenarioNamed(sizing.scenario);
    const route = sizing.route ?? scenario.route;
    const share = (budget.measuringMs - budget.spentMs()) / (target.sizings.length - index);
    console.log(`\n${sizing.component}: ${route}, p95 < ${p95Target(scenario)} ms`);
    if (target.sharesMachine) await budget.waitQuiet();
    const found = await capacity(target, sizing, budget, share);
    if (!found) throw new Error(`${sizing.component}: no rate down to 0.1/s held ${route} within its p95 target`);
    const measured: ComponentCapacity = {
      route,
      requestsPerSecond: roundRate(found.rate * sizing.unitsPerRequest),
      ...(sizing.unitsPerRequest === 1 ? {} : { unitsPerRequest: sizing.unitsPerRequest }),
      p95TargetMs: p95Target(scenario),
      cpuPercentAtCapacity: Math.round(found.result.platformCpuPercent),
      ...(found.result.memoryMiB === undefined ? {} : { memoryMiBAtCapacity: found.result.memoryMiB }),
    };
    const bound = found.bounded ? "" : " (a lower bound: the time ran out before a step failed)";
    const memory = measured.memoryMiBAtCapacity === undefined ? "" : `, memory ${measured.memoryMiBAtCapacity} MiB`;
    console.log(`${sizing.component}: ${measured.requestsPerSecond}/s at p95 ${found.result.p95Ms.toFixed(1)} ms, CPU ${measured.cpuPercentAtCapacity} % of one core${memory}${bound}`);
    components[sizing.component] = measured;
    if (!found.bounded) lowerBounds.push(sizing.component);
    foreign.push(found.result.foreignCpuPercent);
  }
  const method = describeMethod(target, { minutes: (Date.now() - started) / 60_000, foreign, lowerBounds });
  return { measuredAt, method, components };
}

async function main(): Promise<number> {
  const [mode, ...flags] = process.argv.slice(2);
  const cluster = flags.includes("--cluster");
  if ((mode !== "check" && mode !== "size") || flags.some((flag) => flag !== "--cluster") || (cluster && mode !== "size")) {
    console.error("usage: node --import tsx loadtest/run.ts check | size [--cluster]");
    return 2;
  }
  const started = Date.now();
  const fixtureDir = mkdtempSync(join(tmpdir(), "docservice-loadtest-"));
  let target: Target | undefined;
  const cleanUp = async () => {
    await target?.stop();
    rmSync(fixtureDir, { recursive: true, force: true });
  };
  // Interrupted (Ctrl-C, a test's timeout): stop the platform (and so its LibreOffice processes) or the node, and remove
  // their data before leaving. Exiting alone would also SIGTERM the platform (test/support/service-process.ts), but leave
  // its data behind.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  }
  try {
    target = await (cluster ? startClusterTarget(fixtureDir) : startEmbeddedTarget(fixtureDir));
    console.log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (mode === "check") {
      const failed = await check(target);
      console.log(`\ncheck ${failed.length ? `FAILED (${failed.join(", ")})` : "passed"} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return failed.length ? 1 : 0;
    }
    const profile = await size(target);
    const file = settings.LOADTEST_PROFILE || DEFAULT_PROFILE;
    writeFileSync(file, `${JSON.stringify(profile, null, 2)}\n`);
    console.log(`\n${relative(process.cwd(), file) || file} written (${((Date.now() - started) / 1000).toFixed(0)} s):\n${JSON.stringify(profile.components, null, 2)}`);
    return 0;
  } finally {
    await cleanUp();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
