/**
 * Load tests with k6 against one replica of every component: the platform
 * (`services/main.ts all`, embedded mode) in its own process on this machine.
 *
 *   node --import tsx loadtest/run.ts check   every scenario for a few seconds at a low rate;
 *                                             exits 1 when any threshold is crossed (CI)
 *   node --import tsx loadtest/run.ts size    (npm run loadtest:size) each component's capacity:
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
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir, totalmem } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { commandLine, descendants, waitQuiet } from "../bench/support/processes.js";
import type { ComponentCapacity, SizingProfile } from "../operator/sizing.js";
import type { ComponentName } from "../operator/crd.js";
import { cacheBin } from "../test/support/cache.js";
import { corpusFile, corpusPath } from "../test/support/corpus.js";
import { makeDocx } from "../test/support/docx-fixtures.js";
import { textPdf } from "../test/support/pdf-fixtures.js";
import { startPlatform, type Platform } from "../test/support/platform.js";
import { TEST_INTERNAL_TOKEN } from "../test/support/service-process.js";
import { freePort } from "../test/support/ports.js";
import { waitFor } from "../test/support/wait.js";
import { k6Version, runK6, treeCpuSeconds, type K6Result, type Protocol } from "./k6.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DEFAULT_PROFILE = join(ROOT, "loadtest", "sizing-profile.json");

interface Scenario {
  name: string;
  script: string;
  protocol: Protocol;
  /** The route or RPC, as the profile names it. */
  route: string;
  p95Ms: number;
  /** Requests per second in check mode. */
  checkRate: number;
  env?: Record<string, string>;
}

/** Every scenario, with its p95 target (loadtest/README.md says why these). */
const SCENARIOS: Scenario[] = [
  { name: "collect", script: "collect.js", protocol: "http", route: "POST /v1/collect (1 event per report)", p95Ms: 100, checkRate: 20 },
  {
    name: "collect-10",
    script: "collect.js",
    protocol: "http",
    route: "POST /v1/collect (10 events per report; events/s into the embedded usage store)",
    p95Ms: 100,
    checkRate: 10,
    env: { EVENTS: "10" },
  },
  { name: "sign", script: "sign.js", protocol: "http", route: "POST /v1/sign (1-page PDF, certificate page)", p95Ms: 1000, checkRate: 2 },
  { name: "convert", script: "convert.js", protocol: "http", route: "POST /v1/convert?from=docx (1-page DOCX)", p95Ms: 3000, checkRate: 1 },
  { name: "register", script: "register.js", protocol: "http", route: "GET /v1/auth/register (a new address each)", p95Ms: 500, checkRate: 5 },
  { name: "verify", script: "verify.js", protocol: "http", route: "GET /v1/auth/verify (wrong code, 401)", p95Ms: 200, checkRate: 10 },
  {
    name: "grpc-telemetry-collect",
    script: "grpc-telemetry-collect.js",
    protocol: "grpc",
    route: "gRPC docservice.v1.TelemetryService/Collect (1 event)",
    p95Ms: 100,
    checkRate: 20,
  },
  {
    name: "grpc-signing-verification-key",
    script: "grpc-signing-verification-key.js",
    protocol: "grpc",
    route: "gRPC docservice.v1.SigningService/GetVerificationKey",
    p95Ms: 100,
    checkRate: 20,
  },
  { name: "grpc-keys-authenticate", script: "grpc-keys-authenticate.js", protocol: "grpc", route: "gRPC docservice.v1.KeyService/Authenticate", p95Ms: 100, checkRate: 20 },
];

interface Sizing {
  component: ComponentName;
  scenario: string;
  /** Units the capacity is counted in per request: events per report for the aggregator. */
  unitsPerRequest: number;
  /** First rate of the search, requests/s. */
  startRate: number;
  /** Step length relative to LOADTEST_STEP_S: slow routes need longer steps to build a queue. */
  stepFactor: number;
}

/** Each component's main route (loadtest/README.md says why these). */
const SIZINGS: Sizing[] = [
  { component: "gateway", scenario: "collect", unitsPerRequest: 1, startRate: 50, stepFactor: 1 },
  { component: "telemetryApi", scenario: "grpc-telemetry-collect", unitsPerRequest: 1, startRate: 50, stepFactor: 1 },
  { component: "telemetryAggregator", scenario: "collect-10", unitsPerRequest: 10, startRate: 20, stepFactor: 1 },
  { component: "keys", scenario: "register", unitsPerRequest: 1, startRate: 50, stepFactor: 1 },
  { component: "signing", scenario: "sign", unitsPerRequest: 1, startRate: 10, stepFactor: 1 },
  { component: "conversion", scenario: "convert", unitsPerRequest: 1, startRate: 2, stepFactor: 2 },
];

const CORPUS_DOCX = "1-page.docx";

/** Raised far above any load: register and verify are rate-limited per address and per client address. */
const UNLIMITED = "1000000000/1";

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

function scenarioNamed(name: string): Scenario {
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (!scenario) throw new Error(`unknown scenario "${name}": expected one of ${SCENARIOS.map((s) => s.name).join(", ")}`);
  return scenario;
}

interface Target {
  platform: Platform;
  pid: number;
  k6: string;
  /** -e variables every scenario gets. */
  env: Record<string, string>;
  poolSize: number;
  docxFixture: string;
}

/** The platform with the fixtures the scenarios open, ready once every backend (the LibreOffice pool too) is healthy. */
async function startTarget(fixtureDir: string): Promise<Target> {
  const k6 = cacheBin("k6");
  const grpcPort = await freePort();
  const poolSize = availableParallelism();
  const platform = await startPlatform({
    GRPC_PORT: String(grpcPort),
    CONVERSION_POOL_SIZE: String(poolSize),
    RATE_LIMIT_REGISTER_PER_EMAIL: UNLIMITED,
    RATE_LIMIT_REGISTER_PER_IP: UNLIMITED,
    RATE_LIMIT_VERIFY_PER_EMAIL: UNLIMITED,
    RATE_LIMIT_VERIFY_PER_IP: UNLIMITED,
  });
  try {
    await waitFor(async () => (await fetch(`${platform.base}/v1/health`)).status === 200, { what: "every backend to be healthy", timeoutMs: 120_000, intervalMs: 250 });
    const pid = descendants(process.pid).find((p) => commandLine(p).includes("services/main.ts all"));
    if (pid === undefined) throw new Error("the platform process was not found among this process's children");
    const pdf = join(fixtureDir, "loadtest.pdf");
    writeFileSync(pdf, await textPdf(1));
    const docx = join(fixtureDir, "loadtest.docx");
    // The corpus's 1-page document (a real Word file); a generated one where the corpus is missing.
    const fromCorpus = existsSync(corpusPath(CORPUS_DOCX));
    writeFileSync(docx, fromCorpus ? corpusFile(CORPUS_DOCX) : makeDocx(["Load test.", "One page.", "Three paragraphs."]));
    const docxFixture = fromCorpus ? `corpus ${CORPUS_DOCX}` : "a generated 3-paragraph DOCX";
    const env = { BASE_URL: platform.base, GRPC_ADDR: `127.0.0.1:${grpcPort}`, API_KEY: platform.apiKey, INTERNAL_TOKEN: TEST_INTERNAL_TOKEN, PROTO_DIR: join(ROOT, "proto"), PDF_FILE: pdf, DOCX_FILE: docx };
    return { platform, pid, k6, env, poolSize, docxFixture };
  } catch (error) {
    await platform.stop();
    throw error;
  }
}

async function step(target: Target, scenario: Scenario, rate: number, durationS: number): Promise<K6Result> {
  const p95Ms = p95Target(scenario);
  // Enough virtual users for the rate at the p95 target, more on demand.
  const vus = Math.ceil((rate * p95Ms) / 1000) + 2;
  return runK6(
    target.k6,
    {
      script: scenario.script,
      protocol: scenario.protocol,
      rate,
      durationS,
      p95Ms,
      env: { ...target.env, ...scenario.env, VUS: String(vus), MAX_VUS: String(3 * vus + 10) },
    },
    target.pid,
  );
}

function line(scenario: Scenario, rate: number, result: K6Result, verdict: string): string {
  return (
    `${scenario.name.padEnd(30)} ${`${rate}/s`.padStart(9)}  p95 ${result.p95Ms.toFixed(1).padStart(7)} ms (< ${p95Target(scenario)})` +
    `  errors ${(result.errorRate * 100).toFixed(2)} %  requests ${result.requests}  dropped ${result.dropped}` +
    `  CPU platform ${result.platformCpuPercent.toFixed(0)} %, k6 ${result.k6CpuPercent.toFixed(0)} %, others ${result.foreignCpuPercent.toFixed(0)} %  ${verdict}`
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

/** Waits until the platform is (nearly) idle: a step past capacity leaves a queue behind. */
async function settle(pid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const before = treeCpuSeconds(pid);
    await sleep(500);
    if (treeCpuSeconds(pid) - before < 0.05) return; // under 10 % of one core
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
  result: K6Result;
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
  const warmUp = await step(target, scenario, rate, Math.min(durationS, 3));
  console.log(line(scenario, rate, warmUp, "warm-up"));
  await settle(target.pid);
  // A step costs its duration plus k6's start-up and the settling after it.
  while (budget.spentMs() + (durationS + 3) * 1000 <= deadline || best === undefined) {
    let result = await step(target, scenario, rate, durationS);
    let passed = sustained(result, rate, durationS);
    if (!passed && result.foreignCpuPercent > BUSY_MACHINE_PERCENT) {
      console.log(line(scenario, rate, result, `${shortfall(result)}; machine busy, again`));
      await settle(target.pid);
      await budget.waitQuiet();
      result = await step(target, scenario, rate, durationS);
      passed = sustained(result, rate, durationS);
    }
    console.log(line(scenario, rate, result, passed ? "holds" : shortfall(result)));
    await settle(target.pid);
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
  const longer = SIZINGS.filter((s) => s.stepFactor !== 1).map((s) => `${s.component} ${s.stepFactor * stepS} s`);
  const targets = SIZINGS.map((s) => `${s.component} ${p95Target(scenarioNamed(s.scenario))} ms`).join(", ");
  const others = `${Math.round(run.foreign.reduce((a, b) => a + b, 0) / run.foreign.length)} % of one core on average (at most ${Math.round(Math.max(...run.foreign))} %)`;
  return (
    `npm run loadtest:size (loadtest/run.ts size, ${run.minutes.toFixed(1)} min) on ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? "unknown CPU"}, ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB), Node ${process.version}, k6 ${k6Version(target.k6)} on the same machine, against one replica of every ` +
    `component in one process, embedded mode (services/main.ts all, LOG_LEVEL=warn, CONVERSION_POOL_SIZE=${target.poolSize}, SIGNING_WORKERS=auto, ` +
    `local signing key, register/verify rate limits lifted; fixtures: a 1-page pdf-lib PDF, ${target.docxFixture}): per component, a 3 s warm-up, ` +
    `then k6 constant-arrival-rate steps of ${stepS} s${longer.length ? ` (${longer.join(", ")})` : ""}, doubling the rate then bisecting to within 10 %; ` +
    `capacity = the highest rate with p95 under the target, under 1 % errors and failed checks and under 1 % dropped iterations (a step failing while ` +
    `other processes took over ${BUSY_MACHINE_PERCENT} % of a core was repeated once the machine was quiet, or after a minute); p95 targets: ${targets}; ` +
    `telemetryAggregator counts events/s (10 per report); cpuPercentAtCapacity = CPU time of the platform's process tree (LibreOffice included) ` +
    `during that step, in % of one core; other processes on the machine used ${others} during those steps` +
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
  for (const [index, sizing] of SIZINGS.entries()) {
    const scenario = scenarioNamed(sizing.scenario);
    const share = (budget.measuringMs - budget.spentMs()) / (SIZINGS.length - index);
    console.log(`\n${sizing.component}: ${scenario.route}, p95 < ${p95Target(scenario)} ms`);
    await budget.waitQuiet();
    const found = await capacity(target, sizing, budget, share);
    if (!found) throw new Error(`${sizing.component}: no rate down to 0.1/s held ${scenario.route} within its p95 target`);
    const measured: ComponentCapacity = {
      route: scenario.route,
      requestsPerSecond: roundRate(found.rate * sizing.unitsPerRequest),
      p95TargetMs: p95Target(scenario),
      cpuPercentAtCapacity: Math.round(found.result.platformCpuPercent),
    };
    const bound = found.bounded ? "" : " (a lower bound: the time ran out before a step failed)";
    console.log(`${sizing.component}: ${measured.requestsPerSecond}/s at p95 ${found.result.p95Ms.toFixed(1)} ms, platform CPU ${measured.cpuPercentAtCapacity} % of one core${bound}`);
    components[sizing.component] = measured;
    if (!found.bounded) lowerBounds.push(sizing.component);
    foreign.push(found.result.foreignCpuPercent);
  }
  const method = describeMethod(target, { minutes: (Date.now() - started) / 60_000, foreign, lowerBounds });
  return { measuredAt, method, components };
}

async function main(): Promise<number> {
  const mode = process.argv[2];
  if (mode !== "check" && mode !== "size") {
    console.error("usage: node --import tsx loadtest/run.ts check|size");
    return 2;
  }
  const started = Date.now();
  const fixtureDir = mkdtempSync(join(tmpdir(), "docservice-loadtest-"));
  let target: Target | undefined;
  const cleanUp = async () => {
    await target?.platform.stop();
    rmSync(fixtureDir, { recursive: true, force: true });
  };
  // Interrupted (Ctrl-C, a test's timeout): stop the platform (and so its LibreOffice processes) and remove its data
  // before leaving. Exiting alone would also SIGTERM it (test/support/service-process.ts), but leave its data behind.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  }
  try {
    target = await startTarget(fixtureDir);
    console.log(`platform ready in ${((Date.now() - started) / 1000).toFixed(1)} s (pid ${target.pid}, ${target.platform.base}, gRPC ${target.env.GRPC_ADDR})`);
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
