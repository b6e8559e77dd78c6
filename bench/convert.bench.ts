/**
 * bench:convert — DOCX → PDF through the platform's POST /v1/convert?from=docx,
 * local LibreOffice pool vs Gotenberg 8, on the same route and documents.
 *
 * Each backend runs alone (platform process + its converters started, measured,
 * and stopped before the next one starts), so the two never share the cores.
 * Per backend: a warm-up, then a closed loop of BENCH_REQUESTS requests at
 * concurrency 1, 2 and 4 cycling through a fixed document set. Any response
 * other than 200 with a PDF aborts the run (exit 1); a missed goal does not.
 */
import { readFileSync, statSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { startGotenberg, type Gotenberg } from "../test/support/gotenberg.js";
import { convertFile, startPlatform, type Platform } from "../test/support/platform.js";
import { waitFor } from "../test/support/wait.js";
import { commandLine, descendants, foreignConverters, measureCpu, waitGone, waitQuiet, type CpuUse } from "./support/processes.js";
import { CORPUS_DIR } from "../test/support/corpus.js";

const CORPUS = CORPUS_DIR;
/**
 * Two small, two medium, two large; all convert cleanly with both backends.
 * Not office2pdf_technical_brief_ko.docx: LibreOffice aborts (SIGABRT) loading it
 * through UNO, so both backends answer 422 (soffice --convert-to converts it).
 */
const DOCUMENTS: Array<{ name: string; size: "small" | "medium" | "large" }> = [
  { name: "1-page.docx", size: "small" },
  { name: "3-pages.docx", size: "small" },
  { name: "10-pages.docx", size: "medium" },
  { name: "table.docx", size: "medium" },
  { name: "VariousPictures.docx", size: "large" },
  { name: "drawing.docx", size: "large" },
];
const CONCURRENCY = [1, 2, 4];
const REQUESTS = positiveInt("BENCH_REQUESTS", 24);
const LEVEL_LIMIT_MS = 120_000;
/** Before each configuration and level: wait (at most QUIET_TIMEOUT_MS) until the cores are less than this busy. */
const QUIET_MAX_BUSY = 0.15;
const QUIET_TIMEOUT_MS = 180_000;
const REQUEST_TIMEOUT_MS = 120_000;
/** Gotenberg as users run it: its default restarts LibreOffice every 10 conversions. */
const GOTENBERG_RESTART_AFTER = 10;

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

interface Doc {
  name: string;
  size: string;
  bytes: Buffer;
}

interface LevelResult {
  concurrency: number;
  completed: number;
  wallMs: number;
  convPerS: number;
  p50: number;
  p95: number;
  timeBounded: boolean;
  cpu: CpuUse;
}

interface BackendResult {
  backend: "local" | "gotenberg";
  /** Pages per document name, from X-Page-Count. */
  pages: Map<string, number>;
  levels: LevelResult[];
  startupMs: number;
  warmupMs: number;
}

class BenchError extends Error {}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** One conversion; anything but a 200 PDF with a page count throws. */
async function convertOnce(platform: Platform, doc: Doc, backend: string): Promise<{ ms: number; pages: number }> {
  const started = performance.now();
  let response: Response;
  try {
    response = await Promise.race([
      convertFile(platform, doc.bytes, doc.name, "docx"),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)), REQUEST_TIMEOUT_MS).unref()),
    ]);
  } catch (error) {
    throw new BenchError(`${backend}: ${doc.name}: request failed: ${(error as Error).message}`);
  }
  const body = Buffer.from(await response.arrayBuffer());
  const ms = performance.now() - started;
  if (response.status !== 200) {
    throw new BenchError(`${backend}: ${doc.name}: HTTP ${response.status}: ${body.toString("utf8").slice(0, 500)}`);
  }
  const type = response.headers.get("content-type") ?? "";
  if (!type.startsWith("application/pdf") || body.subarray(0, 5).toString("latin1") !== "%PDF-") {
    throw new BenchError(`${backend}: ${doc.name}: 200 but not a PDF (content-type "${type}", ${body.length} bytes)`);
  }
  const pages = Number(response.headers.get("x-page-count"));
  if (!Number.isInteger(pages) || pages < 1) {
    throw new BenchError(`${backend}: ${doc.name}: bad X-Page-Count "${response.headers.get("x-page-count")}"`);
  }
  return { ms, pages };
}

/** `count` requests over `concurrency` workers, request i converting docs[i % docs.length]. */
async function closedLoop(platform: Platform, docs: Doc[], backend: string, concurrency: number, count: number, pages: Map<string, number>, limitMs = Infinity) {
  const latencies: number[] = [];
  let next = 0;
  let timeBounded = false;
  const started = performance.now();
  const deadline = started + limitMs;
  const worker = async () => {
    for (;;) {
      if (next >= count) return;
      if (performance.now() >= deadline) return void (timeBounded = true);
      const doc = docs[next++ % docs.length];
      const result = await convertOnce(platform, doc, backend);
      latencies.push(result.ms);
      const known = pages.get(doc.name);
      if (known === undefined) pages.set(doc.name, result.pages);
      else if (known !== result.pages) throw new BenchError(`${backend}: ${doc.name}: ${result.pages} pages, earlier ${known}: the backend is not deterministic`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return { latencies, wallMs, timeBounded };
}

/** Other people's jobs on this 2-core machine skew the timings: wait for a quiet moment, and say so. */
async function quiet(before: string): Promise<void> {
  const result = await waitQuiet({ maxBusy: QUIET_MAX_BUSY, timeoutMs: QUIET_TIMEOUT_MS });
  if (!result.quiet) {
    console.log(`  warning: machine still ${(result.busy * 100).toFixed(0)} % busy after waiting ${(result.waitedMs / 1000).toFixed(0)} s; measuring ${before} anyway`);
  } else if (result.waitedMs >= 1000) {
    console.log(`  waited ${(result.waitedMs / 1000).toFixed(0)} s for other processes to quiet down before ${before}`);
  }
}

async function runBackend(backend: "local" | "gotenberg", docs: Doc[]): Promise<BackendResult> {
  const setupStarted = performance.now();
  let gotenberg: Gotenberg | undefined;
  let platform: Platform | undefined;
  const existing = new Set(descendants(process.pid)); // e.g. tsx's esbuild service
  try {
    const env: Record<string, string> = { CONVERSION_BACKEND: backend };
    if (backend === "gotenberg") {
      gotenberg = await startGotenberg({ restartAfter: GOTENBERG_RESTART_AFTER });
      env.GOTENBERG_URL = gotenberg.url;
    }
    platform = await startPlatform(env);
    const pid = platform.process.pid;
    const started = platform;
    // The local pool starts in the background; /v1/health is 200 once one instance is up.
    await waitFor(async () => (await fetch(`${started.base}/v1/health`)).status === 200, { what: `${backend} conversion backend healthy`, timeoutMs: 90_000, intervalMs: 200 });
    const startupMs = performance.now() - setupStarted;

    // Warm-up: every document once alone (records page counts), then once more
    // two at a time, so that the pool's second instance has seen every document too.
    const pages = new Map<string, number>();
    const warmStarted = performance.now();
    await closedLoop(platform, docs, backend, 1, docs.length, pages);
    await closedLoop(platform, docs, backend, 2, docs.length, pages);
    const warmupMs = performance.now() - warmStarted;
    const startedPids = descendants(process.pid).filter((p) => !existing.has(p));
    console.log(
      `  ${backend}: ready in ${(startupMs / 1000).toFixed(1)} s, warm-up ${(warmupMs / 1000).toFixed(1)} s (${2 * docs.length} conversions); ` +
        `processes started for it: ${startedPids.length} (platform pid ${pid}), ${startedPids.filter((p) => commandLine(p).includes("soffice.bin")).length} soffice.bin`,
    );

    const levels: LevelResult[] = [];
    for (const concurrency of CONCURRENCY) {
      await quiet(`${backend} c=${concurrency}`);
      const cpu = measureCpu();
      const run = await closedLoop(platform, docs, backend, concurrency, REQUESTS, pages, LEVEL_LIMIT_MS);
      const level: LevelResult = {
        concurrency,
        completed: run.latencies.length,
        wallMs: run.wallMs,
        convPerS: run.latencies.length / (run.wallMs / 1000),
        p50: percentile(run.latencies, 50),
        p95: percentile(run.latencies, 95),
        timeBounded: run.timeBounded,
        cpu: cpu(),
      };
      levels.push(level);
      console.log(
        `  ${backend} c=${concurrency}: ${level.completed} conversions in ${(level.wallMs / 1000).toFixed(1)} s` +
          `${level.timeBounded ? ` (stopped at the ${LEVEL_LIMIT_MS / 1000} s limit)` : ""}, ` +
          `machine CPU busy ${(level.cpu.machineBusy * 100).toFixed(0)} %, other processes ${level.cpu.foreignCpuS.toFixed(1)} CPU-s`,
      );
    }
    return { backend, pages, levels, startupMs, warmupMs };
  } finally {
    // Stop everything this configuration started and wait until it is gone, so the next one has the cores alone.
    const tree = descendants(process.pid).filter((pid) => !existing.has(pid));
    await platform?.stop();
    await gotenberg?.stop();
    const left = await waitGone(tree);
    if (left.length > 0) {
      console.error(`  ${backend}: still running after stop: ${left.map((p) => `${p} ${commandLine(p).slice(0, 80)}`).join("; ")}`);
    }
  }
}

function loadDocuments(): Doc[] {
  return DOCUMENTS.map(({ name, size }) => {
    const path = join(CORPUS, name);
    statSync(path);
    return { name, size, bytes: readFileSync(path) };
  });
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
const pad = (text: string, width: number) => text.padEnd(width);
const lpad = (text: string, width: number) => text.padStart(width);

async function main(): Promise<void> {
  const runStarted = performance.now();
  const docs = loadDocuments();
  console.log(`bench:convert — POST /v1/convert?from=docx through the platform process (services/main.ts all)`);
  console.log(`machine: ${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  console.log(`documents (${docs.length}, request i converts document i mod ${docs.length}):`);
  for (const doc of docs) console.log(`  ${pad(doc.size, 7)} ${lpad((doc.bytes.length / 1024).toFixed(1), 6)} KB  ${doc.name}`);
  console.log(`  (not office2pdf_technical_brief_ko.docx: LibreOffice aborts loading it through UNO, so Gotenberg answers 422; the local pool converts it through its cold fallback)`);
  console.log(`requests per concurrency level: ${REQUESTS} (BENCH_REQUESTS), at most ${LEVEL_LIMIT_MS / 1000} s per level; concurrency ${CONCURRENCY.join(", ")}`);
  console.log(`local: CONVERSION_POOL_SIZE=${process.env.CONVERSION_POOL_SIZE ?? `auto (${availableParallelism()})`}`);
  console.log(`gotenberg: defaults (LibreOffice restarted every ${GOTENBERG_RESTART_AFTER} conversions)`);
  const foreign = foreignConverters();
  if (foreign.length > 0) {
    console.log(`warning: ${foreign.length} converter processes not started by this benchmark are running and may take CPU:`);
    for (const p of foreign) console.log(`  ${p.pid} ${p.command.slice(0, 110)}`);
  }

  const results: BackendResult[] = [];
  for (const backend of ["local", "gotenberg"] as const) {
    console.log(`\n${backend}:`);
    await quiet(`starting ${backend}`);
    results.push(await runBackend(backend, docs));
  }
  const [local, gotenberg] = results;

  console.log(`\nresults (${REQUESTS} requests per level; latency = whole request, upload to last PDF byte)`);
  console.log(`${pad("backend", 10)} ${lpad("conc", 4)} ${lpad("done", 5)} ${lpad("conv/s", 7)} ${lpad("p50", 9)} ${lpad("p95", 9)}`);
  for (const result of results) {
    for (const level of result.levels) {
      console.log(
        `${pad(result.backend, 10)} ${lpad(String(level.concurrency), 4)} ${lpad(String(level.completed), 5)} ${lpad(level.convPerS.toFixed(2), 7)} ` +
          `${lpad(ms(level.p50), 9)} ${lpad(ms(level.p95), 9)}${level.timeBounded ? "  (time-bounded)" : ""}`,
      );
    }
  }

  console.log(`\nlocal / gotenberg`);
  console.log(`${lpad("conc", 4)} ${lpad("throughput", 11)} ${lpad("p50", 7)}`);
  for (let i = 0; i < CONCURRENCY.length; i++) {
    const [l, g] = [local.levels[i], gotenberg.levels[i]];
    console.log(`${lpad(String(l.concurrency), 4)} ${lpad((l.convPerS / g.convPerS).toFixed(2) + "x", 11)} ${lpad((l.p50 / g.p50).toFixed(2) + "x", 7)}`);
  }

  console.log(`\npage counts (X-Page-Count)`);
  let mismatches = 0;
  for (const doc of docs) {
    const [l, g] = [local.pages.get(doc.name), gotenberg.pages.get(doc.name)];
    const same = l === g;
    if (!same) mismatches++;
    console.log(`  ${pad(doc.name, 36)} local ${lpad(String(l), 3)}  gotenberg ${lpad(String(g), 3)}${same ? "" : "  MISMATCH"}`);
  }
  console.log(mismatches === 0 ? "  identical for every document" : `  ${mismatches} mismatch(es)`);

  const [l4, g4] = [local.levels.at(-1)!, gotenberg.levels.at(-1)!];
  const pass = l4.convPerS / g4.convPerS >= 2.0 && l4.p50 <= g4.p50;
  console.log(
    `\ngoal at concurrency 4: throughput ratio >= 2.0 and p50 local <= p50 gotenberg: ${pass ? "PASS" : "FAIL"} ` +
      `(ratio ${(l4.convPerS / g4.convPerS).toFixed(2)}, p50 ${ms(l4.p50)} vs ${ms(g4.p50)})`,
  );
  console.log(`run time ${((performance.now() - runStarted) / 1000).toFixed(0)} s`);
}

try {
  await main();
} catch (error) {
  console.error(`\nbench:convert failed: ${error instanceof BenchError ? error.message : (error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
}
