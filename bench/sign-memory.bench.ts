/**
 * bench:sign, memory part — what POST /v1/sign of a large PDF costs the
 * platform process (its own process, embedded defaults, LOG_LEVEL warn) in
 * resident memory: the rise of its high-water mark (VmHWM, reset through
 * /proc/<pid>/clear_refs just before) over its resident size at that moment,
 * as a multiple of the file size, and the time the request took. The file is
 * BENCH_SIGN_PAGES (300) pages of incompressible images, about 100 KB each;
 * a 1-page one for comparison. Each case runs on a fresh platform after a
 * warm-up with 1-page documents, so one case's garbage does not count in the
 * next; a large request is measured the first time on that platform and
 * then AGAIN more times (their median); both are held to the goal of at most
 * MEMORY_GOAL times the file (bench/README.md, "Resident memory of a large
 * sign request"):
 *
 *   sign                 the whole request: body, worker, signer, answer
 *   sign, no page        certificate.enabled false: no certificate page
 *   verify, not a PDF    the path up to the worker alone: /v1/verify of as many
 *                        random bytes, read, decoded, handed to a signing
 *                        worker, refused there at once (422)
 *   sign, replay         the same request again under its eventId: body in,
 *                        the stored document out of the ledger (its own
 *                        copies included), the answer
 *   sign ×10 at once     peak resident size of ten concurrent requests
 *
 * Then the time of POST /v1/sign of the large file against its floor, a bare
 * node:http server that only takes the document in and gives it back as base64
 * JSON (bench/bare-sign-server.ts), measured in alternation with the same
 * client; goal: at most FLOOR_GOAL times the floor.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { noisePdf } from "../test/support/noise-pdf.js";
import { pdfsig } from "../test/support/pdf-validators.js";
import { startPlatform, type Platform } from "../test/support/platform.js";
import { freePort } from "../test/support/ports.js";
import { residentRise, type ResidentRise } from "../test/support/process-memory.js";
import { waitForTcp } from "../test/support/wait.js";
import { postJson, signBody, signedPdfOf } from "../test/support/sign-requests.js";

const PAGES = Number(process.env.BENCH_SIGN_PAGES ?? 300);
const IMAGE_BYTES = 100_000;
const CONCURRENT = 10;
const FLOOR_ROUNDS = 4;
const FLOOR_GOAL = 1.25;
/** Resident rise goal of one large request, as a multiple of the file. */
const MEMORY_GOAL = 3;
/** Requests measured after the first one on the same platform. */
const AGAIN = 3;
const MB = 1024 * 1024;

/** POSTs a JSON body to the platform; anything but `status` is an error. */
async function post(platform: Platform, path: string, body: string, status = 200): Promise<Awaited<ReturnType<typeof postJson>>> {
  const result = await postJson(platform.base, path, body, platform.apiKey);
  if (result.status !== status) throw new Error(`${path} answered ${result.status}, not ${status}: ${JSON.stringify(result.body).slice(0, 500)}`);
  return result;
}

async function measure(platform: Platform, work: () => Promise<unknown>): Promise<ResidentRise> {
  await sleep(1000); // the warm-up's garbage collected, idle tasks done
  return residentRise(platform.process.pid, work);
}

/** A request's rise the first time on this platform, and the median of AGAIN more. */
interface Rises {
  first: ResidentRise;
  again: ResidentRise;
}

async function measureRepeatedly(platform: Platform, work: () => Promise<unknown>): Promise<Rises> {
  const first = await measure(platform, work);
  const again: ResidentRise[] = [];
  for (let i = 0; i < AGAIN; i++) again.push(await measure(platform, work));
  again.sort((a, b) => a.rise - b.rise);
  return { first, again: again[Math.floor(AGAIN / 2)]! };
}

async function withPlatform<T>(run: (platform: Platform) => Promise<T>): Promise<T> {
  const platform = await startPlatform({ CONVERSION_POOL_SIZE: "1", LOG_LEVEL: "warn", SIGNING_MAX_BYTES: String(64 * MB) });
  try {
    // Both worker threads load the signer and the page fonts before anything is measured.
    const warm = JSON.stringify(signBody(await noisePdf(1, IMAGE_BYTES)));
    for (let i = 0; i < 2; i++) await Promise.all([0, 1].map(() => post(platform, "/v1/sign", warm)));
    return await run(platform);
  } catch (error) {
    console.error(platform.process.output().slice(-4000));
    throw error;
  } finally {
    await platform.stop();
  }
}

const format = (m: ResidentRise, fileBytes: number) =>
  `+${(m.rise / MB).toFixed(0).padStart(4)} MB  (${(m.rise / fileBytes).toFixed(1).padStart(5)}× the file)  ${(m.ms / 1000).toFixed(2).padStart(6)} s`;

/** The first and the later requests judged against MEMORY_GOAL; a miss is remembered for the exit code. */
function formatRises(rises: Rises, fileBytes: number): string {
  const ok = Math.max(rises.first.rise, rises.again.rise) / fileBytes <= MEMORY_GOAL;
  if (!ok) process.exitCode = 1;
  return `first ${format(rises.first, fileBytes)}; again ${format(rises.again, fileBytes)} ${ok ? "PASS" : "FAIL"}`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "docservice-bench-sign-memory-"));
  try {
    const small = await noisePdf(1, IMAGE_BYTES);
    const large = await noisePdf(PAGES, IMAGE_BYTES);
    const pages = `${PAGES} pages`.padEnd(10);
    console.log(`POST /v1/sign, platform process resident high-water mark rise; ${PAGES} pages = ${(large.length / MB).toFixed(1)} MB, 1 page = ${(small.length / 1024).toFixed(0)} KB`);

    const signedSmall = JSON.stringify(signBody(small));
    const one = await withPlatform((platform) => measure(platform, () => post(platform, "/v1/sign", signedSmall)));
    console.log(`  sign               1 page     ${format(one, small.length)}`);

    console.log(`  ${PAGES} pages, the first request on a fresh platform, and the median of the ${AGAIN} after it (goal for both ≤ ${MEMORY_GOAL}× the file):`);
    const signed = JSON.stringify(signBody(large));
    const file = join(dir, "signed.pdf");
    const sign = await withPlatform((platform) => measureRepeatedly(platform, async () => writeFileSync(file, signedPdfOf(await post(platform, "/v1/sign", signed)))));
    if (!(await pdfsig(file)).signatures[0]?.valid) throw new Error(`pdfsig does not accept the signed ${PAGES}-page PDF`);
    console.log(`  sign               ${formatRises(sign, large.length)}`);

    const noPage = JSON.stringify(signBody(large, { certificate: { enabled: false } }));
    const m = await withPlatform((platform) => measureRepeatedly(platform, () => post(platform, "/v1/sign", noPage)));
    console.log(`  sign, no page      ${formatRises(m, large.length)}`);

    const notPdf = JSON.stringify({ document: { base64: randomBytes(large.length).toString("base64") } });
    const verify = await withPlatform((platform) => measureRepeatedly(platform, () => post(platform, "/v1/verify", notPdf, 422)));
    console.log(`  verify, not a PDF  ${formatRises(verify, large.length)}`);

    const replayed = JSON.stringify(signBody(large, { eventId: "bench-replay" }));
    const replay = await withPlatform(async (platform) => {
      await post(platform, "/v1/sign", replayed);
      return measureRepeatedly(platform, () => post(platform, "/v1/sign", replayed));
    });
    console.log(`  sign, replay       ${formatRises(replay, large.length)}`);

    const many = await withPlatform((platform) => measure(platform, () => Promise.all(Array.from({ length: CONCURRENT }, () => post(platform, "/v1/sign", signed)))));
    console.log(`  sign ×${CONCURRENT} at once   ${pages} peak ${(many.peak / MB).toFixed(0)} MB resident, ${format(many, CONCURRENT * large.length)} (of ten files)`);

    const { platformMs, floorMs } = await againstFloor(signed);
    const ratio = platformMs / floorMs;
    console.log(`POST /v1/sign ${pages}: ${platformMs.toFixed(0)} ms, the bare floor (decode, hash, encode only) ${floorMs.toFixed(0)} ms: ${ratio.toFixed(2)}× (goal ≤ ${FLOOR_GOAL}×, best of ${FLOOR_ROUNDS} rounds each)`);
    if (ratio > FLOOR_GOAL) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The best time of POST /v1/sign of `body` on the platform and on the bare floor, measured in turn. */
async function againstFloor(body: string): Promise<{ platformMs: number; floorMs: number }> {
  const port = await freePort();
  const floor = spawn(process.execPath, ["--import", "tsx", "bench/bare-sign-server.ts"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit"] });
  const floorBase = `http://127.0.0.1:${port}`;
  try {
    await waitForTcp(port, "127.0.0.1", 30_000);
    return await withPlatform(async (platform) => {
      const timed = async (base: string, apiKey?: string) => {
        const started = performance.now();
        signedPdfOf(await postJson(base, "/v1/sign", body, apiKey));
        return performance.now() - started;
      };
      let platformMs = Infinity;
      let floorMs = Infinity;
      for (let round = 0; round < FLOOR_ROUNDS; round++) {
        platformMs = Math.min(platformMs, await timed(platform.base, platform.apiKey));
        floorMs = Math.min(floorMs, await timed(floorBase));
      }
      return { platformMs, floorMs };
    });
  } finally {
    floor.kill("SIGTERM");
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
