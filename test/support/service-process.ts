import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { InternalTransport } from "../../services/access/internal-transport.js";
import { compiled } from "./compiled-platform.js";
import { waitFor } from "./wait.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ServiceProcess {
  /** The process id, for reading its /proc entries (e.g. memory in bench:sign). */
  pid: number;
  /** Everything the process printed so far. */
  output(): string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The gateway's identity between the processes of a split deployment started here without TLS. */
export const TEST_INTERNAL_TOKEN = "test-internal-token-0123456789abcdef";

/** The plaintext internal transport those processes use, for a test's own clients (health checks). */
export const plaintextTransport = new InternalTransport({ gatewayNames: [], internalToken: TEST_INTERNAL_TOKEN });

const running = new Set<ChildProcess>();
// SIGTERM, not SIGKILL: the service's own shutdown then stops the LibreOffice process groups it started.
process.on("exit", () => running.forEach((child) => child.kill("SIGTERM")));

/**
 * Runs the compiled `services/main.ts <role>` (dist/services/main.js, as the
 * images do) as its own process, the way a split deployment does, and waits
 * until `ready` holds.
 */
export async function startService(role: string, env: Record<string, string>, ready: () => Promise<boolean>): Promise<ServiceProcess> {
  // A data directory of its own unless the test shares one, so nothing lands in the checkout.
  const ownDataDir = env.DOCSERVICE_DATA_DIR ? undefined : mkdtempSync(join(tmpdir(), `docservice-${role}-`));
  const child = spawn(process.execPath, [compiled("services/main.js"), role], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "info", DOCSERVICE_DATA_DIR: ownDataDir ?? "", DOCSERVICE_INTERNAL_TOKEN: TEST_INTERNAL_TOKEN, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${role} exited with ${child.exitCode}:\n${output}`);
        return ready();
      },
      // a start takes seconds alone; beside two other test files on a machine three times slower, over 30
      { what: `${role} to start`, timeoutMs: 120_000 },
    );
  } catch (error) {
    child.kill("SIGTERM");
    throw error;
  }
  return {
    pid: child.pid!,
    output: () => output,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** True when an HTTP GET of the URL answers at all. */
export async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url);
    return true;
  } catch {
    return false;
  }
}
