/**
 * Runs loadtest/scenarios/ramp.js (sign, convert and collect at once, each
 * following stages of its own: rates, virtual users sending back to back, or
 * both) and reads k6's per-request output, so that a
 * test can judge the load window by window: rate, p95 and failures per route,
 * against what the cluster did at the same moment.
 */
import { spawn } from "node:child_process";
import { createReadStream, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { SCENARIO_DIR } from "../../loadtest/k6.js";
import { freePort } from "./ports.js";
import { waitFor } from "./wait.js";

export const ROUTES = ["sign", "convert", "collect"] as const;
export type Route = (typeof ROUTES)[number];

/** What each route answers when it does its work. */
export const EXPECTED_STATUS: Record<Route, number> = { sign: 200, convert: 200, collect: 202 };

/**
 * A stage: from the target before it (0 at the start), linearly to `target`
 * over `seconds`. A rate's target is requests per second; a number of users',
 * virtual users (whole), each sending the route's requests back to back.
 */
export interface Stage {
  target: number;
  seconds: number;
}

/** A route's load: requests at a rate, virtual users sending back to back, or both at once (each timed from the start). */
export interface RouteLoad {
  rates?: Stage[];
  users?: Stage[];
}

export interface RampRequest {
  route: Route;
  /** When it was sent, ms since the ramp started. */
  atMs: number;
  durationMs: number;
  /** HTTP status; 0 when no answer came (k6's `error` says why). */
  status: number;
  error: string;
}

/** Iterations k6 could not start in time (every virtual user busy): load the platform was to be offered but was not sent. */
export interface RampDrop {
  route: Route;
  /** When, ms since the ramp started. */
  atMs: number;
  count: number;
}

export interface RampResult {
  requests: RampRequest[];
  dropped: RampDrop[];
  /** k6's last lines, for a failure's message. */
  output: string;
}

export interface Ramp {
  /** Wall-clock time (Date.now()) of the ramp's start: its first stage begins then. */
  startedAt: number;
  /**
   * Ends the load before its stages do (from `controlFromS`, see startRamp): no
   * request is sent from then on, and once none is in flight k6 is stopped.
   * Resolves then.
   */
  end(): Promise<void>;
  /** Resolves once every stage has run, or the load was ended, and every request in flight has finished. */
  done: Promise<RampResult>;
}

/** The tag of the script's own requests that ask whether the load was ended (loadtest/scenarios/ramp.js). */
const CONTROL_REQUEST = "load control";
/** How long a virtual user keeps the answer to that question (ramp.js). */
const CONTROL_ANSWER_KEPT_MS = 1000;
/** k6's exit code when a signal stopped it. */
const K6_SIGNALLED = 105;

/** The target stages set `atS` seconds into the ramp (0 without stages). */
export function targetAt(stages: Stage[] = [], atS: number): number {
  let from = 0;
  let start = 0;
  for (const { target, seconds } of stages) {
    if (atS < start + seconds) return from + ((target - from) * (atS - start)) / seconds;
    from = target;
    start += seconds;
  }
  return from;
}

/**
 * Starts k6 with `env` (BASE_URL, API_KEY, PDF_FILE, DOCX_FILE, LICENSE_KEY, …)
 * and each route's load. From `controlFromS` seconds on, the load can be ended
 * early ({@link Ramp.end}): the script asks a server of this process on
 * loopback, and k6's own API (on loopback too) says when none of its virtual
 * users is busy.
 */
export async function startRamp(k6: string, load: Partial<Record<Route, RouteLoad>>, env: Record<string, string>, controlFromS = 0): Promise<Ramp> {
  const dir = mkdtempSync(join(tmpdir(), "docservice-ramp-"));
  const points = join(dir, "points.json");
  let ending = false;
  const control = createServer((_request, response) => void response.writeHead(ending ? 410 : 204).end());
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
  const k6Api = `127.0.0.1:${await freePort()}`;
  const variables: Record<string, string> = { ...env, CONTROL_URL: `http://127.0.0.1:${(control.address() as AddressInfo).port}/`, CONTROL_FROM_S: String(controlFromS) };
  const asVariable = (stages: Stage[]) => stages.map(({ target, seconds }) => `${target}:${seconds}`).join(",");
  for (const route of ROUTES) {
    const { rates, users } = load[route] ?? {};
    if (rates) variables[`${route.toUpperCase()}_STAGES`] = asVariable(rates);
    if (users) variables[`${route.toUpperCase()}_USER_STAGES`] = asVariable(users);
  }
  const args = ["run", "--quiet", "--no-color", "--no-usage-report", "--summary-mode=disabled", "--address", k6Api, "--out", `json=${points}`];
  for (const [name, value] of Object.entries(variables)) args.push("-e", `${name}=${value}`);
  args.push(join(SCENARIO_DIR, "ramp.js"));
  const startedAt = Date.now();
  const child = spawn(k6, args, { cwd: SCENARIO_DIR, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk).slice(-8000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const done = (async () => {
    try {
      const exitCode = await new Promise<number>((resolve, reject) => {
        child.once("error", reject);
        child.once("close", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
      });
      if (exitCode !== 0 && !(ending && exitCode === K6_SIGNALLED)) throw new Error(`k6 ramp.js exited with ${exitCode}:\n${output}`);
      return { ...(await readRequests(points, startedAt)), output };
    } finally {
      control.close();
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  /** The virtual users running an iteration: k6's "vus" (those of an arrival rate count while they work). */
  const busyUsers = async () => ((await (await fetch(`http://${k6Api}/v1/status`)).json()) as { data: { attributes: { vus: number } } }).data.attributes.vus;
  const end = async () => {
    ending = true;
    // a virtual user that asked just before sends one more request, which is then in flight
    await sleep(CONTROL_ANSWER_KEPT_MS * 1.5);
    const exited = () => child.exitCode !== null || child.signalCode !== null;
    await waitFor(async () => exited() || (await busyUsers()) === 0, { what: "k6's virtual users idle once the load was ended", timeoutMs: 120_000, intervalMs: 200 });
    child.kill("SIGTERM");
  };
  return { startedAt, end, done };
}

interface K6Point {
  type: string;
  metric: string;
  data: { time: string; value: number; tags?: Record<string, string> };
}

/** The http_req_duration and dropped_iterations points of k6's JSON output (one object per line). */
async function readRequests(file: string, startedAt: number): Promise<Omit<RampResult, "output">> {
  const requests: RampRequest[] = [];
  const dropped: RampDrop[] = [];
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (!line.includes('"type":"Point"')) continue;
    const { metric, data } = JSON.parse(line) as K6Point;
    // a route's scenarios: its rate's, named after it, and its users', "<route>_users"
    const route = data.tags?.scenario?.replace(/_users$/, "") as Route | undefined;
    if (!route || !ROUTES.includes(route) || data.tags?.name === CONTROL_REQUEST) continue;
    if (metric === "dropped_iterations") dropped.push({ route, atMs: Date.parse(data.time) - startedAt, count: data.value });
    else if (metric === "http_req_duration") {
      requests.push({
        route,
        atMs: Date.parse(data.time) - startedAt,
        durationMs: data.value,
        status: Number(data.tags?.status ?? 0),
        error: data.tags?.error ?? "",
      });
    }
  }
  return { requests, dropped };
}

export interface RouteWindow {
  requests: number;
  /** 0 when the window has no request. */
  p95Ms: number;
  /** Requests not answered with the route's expected status, by status (0: no answer). */
  failures: Map<number, number>;
  /** Iterations k6 could not start. */
  dropped: number;
}

/** Each route's requests sent, and iterations dropped, in [fromMs, toMs) of the ramp. */
export function windowOf({ requests, dropped }: Pick<RampResult, "requests" | "dropped">, fromMs: number, toMs: number): Record<Route, RouteWindow> {
  const window = {} as Record<Route, RouteWindow>;
  const within = (atMs: number) => atMs >= fromMs && atMs < toMs;
  for (const route of ROUTES) {
    const inWindow = requests.filter((request) => request.route === route && within(request.atMs));
    const durations = inWindow.map((request) => request.durationMs).sort((a, b) => a - b);
    const failures = new Map<number, number>();
    for (const { status } of inWindow) if (status !== EXPECTED_STATUS[route]) failures.set(status, (failures.get(status) ?? 0) + 1);
    window[route] = {
      requests: inWindow.length,
      p95Ms: durations.length ? durations[Math.ceil(durations.length * 0.95) - 1]! : 0,
      failures,
      dropped: dropped.filter((drop) => drop.route === route && within(drop.atMs)).reduce((sum, drop) => sum + drop.count, 0),
    };
  }
  return window;
}
