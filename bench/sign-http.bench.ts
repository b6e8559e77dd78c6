/**
 * bench:sign, HTTP part — latency of POST /v1/sign on the platform (its own
 * process, embedded defaults: local RSA-2048 key, worker threads on every core)
 * at concurrency 8: a 1-page and a 20-page PDF with the certificate page.
 * Every answer must be a 200 with a PDF that pdfsig accepts (checked once per
 * document before timing; any other status aborts the run). BENCH_TRACE_RATIO
 * turns tracing on (support/bench-tracing.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { textPdf } from "../test/support/pdf-fixtures.js";
import { benchTracing } from "./support/bench-tracing.js";
import { pdfsig } from "../test/support/pdf-validators.js";
import { startPlatform } from "../test/support/platform.js";
import { waitFor } from "../test/support/wait.js";
import { postJson, signBody, signedPdfOf } from "../test/support/sign-requests.js";

const CONCURRENCY = 8;
const REQUESTS = Number(process.env.BENCH_SIGN_REQUESTS ?? 400);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "docservice-bench-sign-http-"));
  // No DOCX here: one LibreOffice instance keeps the cores for signing.
  const tracing = await benchTracing();
  const platform = await startPlatform({ CONVERSION_POOL_SIZE: "1", LOG_LEVEL: "warn", ...tracing.env });
  try {
    // LibreOffice starting in the background would share the cores with the measurement.
    await waitFor(async () => (await fetch(`${platform.base}/v1/health`)).status === 200, { timeoutMs: 120_000, intervalMs: 250, what: "every backend healthy" });
    console.log(`POST /v1/sign over HTTP, concurrency ${CONCURRENCY}, ${REQUESTS} requests, ${availableParallelism()} cores, local key; ${tracing.describe}`);
    for (const pages of [1, 20]) {
      const body = JSON.stringify(signBody(await textPdf(pages)));
      const sign = () => postJson(platform.base, "/v1/sign", body, platform.apiKey);
      const file = join(dir, `${pages}.pdf`);
      writeFileSync(file, signedPdfOf(await sign()));
      if (!(await pdfsig(file)).signatures[0]?.valid) throw new Error(`pdfsig does not accept ${file}`);
      // warm every worker thread (one at a time, every request would go to the first)
      for (let i = 0; i < 5; i++) await Promise.all(Array.from({ length: CONCURRENCY }, sign));

      const latencies: number[] = [];
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < REQUESTS) {
            const t = performance.now();
            const result = await sign();
            if (result.status !== 200) throw new Error(`/v1/sign answered ${result.status}: ${JSON.stringify(result.body)}`);
            latencies.push(performance.now() - t);
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      latencies.sort((a, b) => a - b);
      console.log(
        `  ${String(pages).padStart(2)} page(s): p50 ${percentile(latencies, 50).toFixed(1)} ms  p99 ${percentile(latencies, 99).toFixed(1)} ms  ` +
          `${(latencies.length / seconds).toFixed(1)} docs/s`,
      );
    }
  } finally {
    // after the platform, whose last spans leave with its shutdown
    await platform.stop();
    const traced = await tracing.summary();
    if (traced) console.log(`  ${traced}`);
    await tracing.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
