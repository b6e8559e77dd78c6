/**
 * bench:auth — what authentication costs, and what the gateway keeps of a bare node:http server's rate.
 *
 * 1. KeyService.authenticate p50/p99: cached hit, and a lookup in real Redis (cache off).
 * 2. Requests/s of an authenticated GET /v1/auth/key through the gateway (embedded mode, one process)
 *    next to a bare node:http server answering the same JSON, each loaded by autocannon from this process.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { loadConfig } from "../services/configuration.js";
import { DataDir } from "../services/core/data-dir.js";
import { createLogger } from "../services/core/logger.js";
import { provisionKeyService } from "../services/keys/provision.js";
import { codeIn } from "../test/support/key-flow.js";
import { freePort } from "../test/support/ports.js";
import { startRedis } from "../test/support/redis.js";
import { waitFor } from "../test/support/wait.js";
import { readdirSync, readFileSync } from "node:fs";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function timeCalls(iterations: number, call: () => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    await call();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function authenticateCosts() {
  const redis = await startRedis();
  const dataDir = mkdtempSync(join(tmpdir(), "docservice-bench-"));
  try {
    const make = (cacheTtl: string) =>
      provisionKeyService(
        loadConfig({ DOCSERVICE_DATA_DIR: dataDir, REDIS_URL: redis.url, KEYS_AUTH_CACHE_TTL_MS: cacheTtl, RATE_LIMIT_REGISTER_PER_EMAIL: "100/60" }),
        new DataDir(dataDir),
        createLogger("silent"),
      );
    const cached = make("600000");
    const uncached = make("0");
    await waitFor(() => cached.service.health().then(() => true), { what: "redis" });
    await cached.service.register({ email: "bench@example.test", clientIp: "" });
    const outbox = join(dataDir, "outbox");
    const mail = readFileSync(join(outbox, readdirSync(outbox).sort().at(-1)!), "utf8").replace(/=\n/g, "");
    const { apiKey } = await cached.service.verify({ email: "bench@example.test", code: codeIn(mail), clientIp: "" });

    await timeCalls(2000, () => cached.service.authenticate({ apiKey })); // warm-up
    await timeCalls(2000, () => uncached.service.authenticate({ apiKey }));
    const hit = await timeCalls(50_000, () => cached.service.authenticate({ apiKey }));
    const lookup = await timeCalls(10_000, () => uncached.service.authenticate({ apiKey }));
    await Promise.all([cached.close(), uncached.close()]);
    return { hit, lookup };
  } finally {
    await redis.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Starts a child process and waits for its URL to answer. */
async function startChild(args: string[], env: Record<string, string>, url: string) {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "inherit"] });
  await waitFor(() => fetch(url).then(() => true), { what: args.join(" "), timeoutMs: 30_000 });
  return () => new Promise<void>((resolve) => (child.once("exit", () => resolve()), child.kill("SIGTERM")));
}

async function load(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

async function throughput() {
  const dataDir = mkdtempSync(join(tmpdir(), "docservice-bench-gw-"));
  const gatewayPort = await freePort();
  const base = `http://127.0.0.1:${gatewayPort}`;
  const stopGateway = await startChild(
    ["services/main.ts", "all"],
    { HOST: "127.0.0.1", PORT: String(gatewayPort), GRPC_PORT: "0", DOCSERVICE_DATA_DIR: dataDir, LOG_LEVEL: "info" },
    `${base}/v1/health`,
  );
  try {
    await fetch(`${base}/v1/auth/register?email=load@example.test`);
    const outbox = join(dataDir, "outbox");
    const mail = readFileSync(join(outbox, readdirSync(outbox).sort().at(-1)!), "utf8").replace(/=\n/g, "");
    const verified = (await (await fetch(`${base}/v1/auth/verify?email=load@example.test&code=${codeIn(mail)}`)).json()) as { apiKey: string };
    const headers = { Authorization: `Bearer ${verified.apiKey}` };
    const body = await (await fetch(`${base}/v1/auth/key`, { headers })).text();

    const barePort = await freePort();
    const stopBare = await startChild(["bench/bare-server.ts"], { PORT: String(barePort), BODY: body }, `http://127.0.0.1:${barePort}/`);
    try {
      await load(`http://127.0.0.1:${barePort}/v1/auth/key`, headers); // warm-up both, then measure both
      await load(`${base}/v1/auth/key`, headers);
      const bare = await load(`http://127.0.0.1:${barePort}/v1/auth/key`, headers);
      const gateway = await load(`${base}/v1/auth/key`, headers);
      return { bare, gateway };
    } finally {
      await stopBare();
    }
  } finally {
    await stopGateway();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const costs = await authenticateCosts();
console.log("KeyService.authenticate (in-process)");
console.log(`  cached hit     p50 ${costs.hit.p50.toFixed(4)} ms   p99 ${costs.hit.p99.toFixed(4)} ms   (goal: p50 < 0.2 ms)`);
console.log(`  Redis lookup   p50 ${costs.lookup.p50.toFixed(4)} ms   p99 ${costs.lookup.p99.toFixed(4)} ms`);
console.log(`  ratio lookup/hit at p50: ${(costs.lookup.p50 / costs.hit.p50).toFixed(1)}x`);

const { bare, gateway } = await throughput();
console.log(`GET /v1/auth/key, ${CONNECTIONS} connections, ${DURATION_S} s each`);
console.log(`  bare node:http   ${bare.rps.toFixed(0)} req/s   p50 ${bare.p50} ms   p99 ${bare.p99} ms`);
console.log(`  gateway          ${gateway.rps.toFixed(0)} req/s   p50 ${gateway.p50} ms   p99 ${gateway.p99} ms`);
console.log(`  ratio gateway/bare: ${(gateway.rps / bare.rps).toFixed(2)} (goal: >= 0.50)`);
