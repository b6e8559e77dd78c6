/**
 * The platform in one process on this machine (`services/main.ts all`,
 * embedded mode): one replica of every component, measured together.
 */
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheBin } from "../test/support/cache.js";
import { startPlatform } from "../test/support/platform.js";
import { freePort } from "../test/support/ports.js";
import { TEST_INTERNAL_TOKEN } from "../test/support/service-process.js";
import { waitFor } from "../test/support/wait.js";
import { treeCpuSeconds } from "./k6.js";
import { EMBEDDED_SIZINGS } from "./scenarios.js";
import { writeFixtures, type Target } from "./target.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Raised far above any load: register and verify are rate-limited per address and per client address. */
const UNLIMITED = "1000000000/1";

/** The platform with the fixtures the scenarios open, ready once every backend (the LibreOffice pool too) is healthy. */
export async function startEmbeddedTarget(fixtureDir: string): Promise<Target> {
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
    const pid = platform.process.pid;
    const fixtures = await writeFixtures(fixtureDir);
    const env = { BASE_URL: platform.base, GRPC_ADDR: `127.0.0.1:${grpcPort}`, API_KEY: platform.apiKey, INTERNAL_TOKEN: TEST_INTERNAL_TOKEN, PROTO_DIR: join(ROOT, "proto"), ...fixtures.env };
    console.log(`platform ready (pid ${pid}, ${platform.base}, gRPC ${env.GRPC_ADDR})`);
    return {
      k6,
      env: () => env,
      cpuSeconds: () => treeCpuSeconds(pid),
      sharesMachine: true,
      command: "npm run loadtest:size",
      sizings: EMBEDDED_SIZINGS,
      description:
        `one replica of every component in one process, embedded mode (services/main.ts all, LOG_LEVEL=warn, CONVERSION_POOL_SIZE=${poolSize}, ` +
        `SIGNING_WORKERS=auto, local signing key, register/verify rate limits lifted; fixtures: a 1-page pdf-lib PDF, ${fixtures.docxFixture})`,
      stop: () => platform.stop(),
    };
  } catch (error) {
    await platform.stop();
    throw error;
  }
}
