import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, codeIn } from "./key-flow.js";
import { freePort } from "./ports.js";
import { answers, startService, type ServiceProcess } from "./service-process.js";

/** The longest conversion a test platform allows (see startPlatform); Gotenberg's own timeout in the tests matches it. */
export const TEST_CONVERSION_TIMEOUT_S = 180;

export interface Platform {
  base: string;
  apiKey: string;
  dataDir: string;
  process: ServiceProcess;
  stop(): Promise<void>;
}

/**
 * `services/main.ts all` in its own process with a fresh data directory, and
 * an API key issued through the real register → outbox → verify flow.
 */
export async function startPlatform(env: Record<string, string> = {}): Promise<Platform> {
  const dataDir = mkdtempSync(join(tmpdir(), "docservice-platform-"));
  const base = `http://127.0.0.1:${await freePort()}`;
  const process = await startService(
    "all",
    // CONVERSION_TIMEOUT_MS: the corpus's slowest document (poi/deep-table-cell.docx) takes 10-30 s alone, and beside two
    // other test files on a slower machine more than the production default of 60 s
    { HOST: "127.0.0.1", PORT: new URL(base).port, GRPC_PORT: "0", DOCSERVICE_DATA_DIR: dataDir, LOG_LEVEL: "warn", CONVERSION_TIMEOUT_MS: String(TEST_CONVERSION_TIMEOUT_S * 1000), ...env },
    () => answers(`${base}/v1/health`),
  );
  const apiKey = await issueKeyFromOutbox({ base, dataDir }, "platform@example.test");
  return {
    base,
    apiKey,
    dataDir,
    process,
    stop: async () => {
      await process.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A new API key for `email` through register → the outbox e-mail → verify. */
export async function issueKeyFromOutbox(platform: Pick<Platform, "base" | "dataDir">, email: string): Promise<string> {
  await call(platform.base, `/v1/auth/register?email=${encodeURIComponent(email)}`);
  const outbox = join(platform.dataDir, "outbox");
  const mail = readFileSync(join(outbox, readdirSync(outbox).sort().at(-1)!), "utf8").replace(/=\n/g, "");
  return (await call(platform.base, `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${codeIn(mail)}`)).body.apiKey as string;
}

/** POSTs a file to /v1/convert as multipart/form-data. */
export async function convertFile(platform: Pick<Platform, "base" | "apiKey">, bytes: Buffer, filename: string, from: string, options: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  form.append("file", new Blob([bytes]), filename);
  const query = new URLSearchParams({ from, ...options });
  return fetch(`${platform.base}/v1/convert?${query}`, { method: "POST", body: form, headers: { Authorization: `Bearer ${platform.apiKey}` } });
}
