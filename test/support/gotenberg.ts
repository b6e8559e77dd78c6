import { accessSync, constants, existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { cacheBin } from "./cache.js";
import { startDaemon } from "./daemon.js";
import { TEST_CONVERSION_TIMEOUT_S } from "./platform.js";
import { freePort } from "./ports.js";
import { waitFor } from "./wait.js";

export interface Gotenberg {
  /** e.g. http://127.0.0.1:PORT; convert with POST `${url}/forms/libreoffice/convert`, multipart field "files". */
  url: string;
  /** Stops Gotenberg and waits until every LibreOffice process it started is gone. */
  stop(): Promise<void>;
}

/**
 * Starts a throwaway Gotenberg (LibreOffice-only build, see scripts/testenv/setup.sh)
 * on a free port; resolves once LibreOffice is up and accepting conversions.
 */
export interface GotenbergOptions {
  /** LibreOffice restarts after this many conversions; Gotenberg's default is 10, tests use 0 (never) for steadier timings. */
  restartAfter?: number;
}

export async function startGotenberg({ restartAfter = 0 }: GotenbergOptions = {}): Promise<Gotenberg> {
  const bin = cacheBin("gotenberg-libreoffice");
  const tools = {
    LIBREOFFICE_BIN_PATH: join(dirname(realpathSync(onPath("soffice"))), "soffice.bin"),
    UNOCONVERTER_BIN_PATH: cacheBin("unoconv"),
    PDFCPU_BIN_PATH: cacheBin("pdfcpu"),
    QPDF_BIN_PATH: onPath("qpdf"),
    PDFTK_BIN_PATH: onPath("pdftk"),
    EXIFTOOL_BIN_PATH: onPath("exiftool"),
  };
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let tempDir = "";

  // startDaemon passes on this process's environment; `env` adds Gotenberg's.
  const daemon = await startDaemon({
    name: `gotenberg-${port}`,
    command: "/usr/bin/env",
    args: (dir) => {
      tempDir = dir;
      liveDirs.add(dir);
      return [
        ...Object.entries(tools).map(([name, path]) => `${name}=${path}`),
        // Request files and LibreOffice's profile go here, so this instance's
        // LibreOffice processes can be told apart by their command line.
        `TMPDIR=${dir}`,
        `XDG_CONFIG_HOME=${dir}`, // pdfcpu writes its config there
        "LANG=C.UTF-8",
        "LC_ALL=C.UTF-8",
        // Otherwise the OpenTelemetry SDK keeps trying to export to localhost:4318.
        "OTEL_TRACES_EXPORTER=none",
        "OTEL_METRICS_EXPORTER=none",
        "OTEL_LOGS_EXPORTER=none",
        bin,
        "--api-bind-ip", "127.0.0.1",
        "--api-port", String(port),
        // Its default, 30 s, is shorter than a test platform's CONVERSION_TIMEOUT_MS: a slow
        // document (poi/deep-table-cell.docx takes 10-30 s alone) would be refused by Gotenberg first.
        "--api-timeout", `${TEST_CONVERSION_TIMEOUT_S}s`,
        "--libreoffice-auto-start", // start LibreOffice now, not on the first conversion
        "--libreoffice-restart-after", String(restartAfter),
        "--gotenberg-graceful-shutdown-duration", "1s",
        "--gotenberg-build-debug-data=false", // skips running every tool at startup for /debug
        "--gotenberg-hide-banner",
      ];
    },
    ready: async () => {
      const res = await fetch(`${url}/health`);
      const health = (await res.json()) as { details?: { libreoffice?: { status?: string } } };
      return res.ok && health.details?.libreoffice?.status === "up";
    },
    // LibreOffice's first start creates its profile: seconds on a slow machine.
    timeoutMs: 30_000,
  }).catch((err: unknown) => {
    kill(processesUsing(tempDir));
    liveDirs.delete(tempDir);
    throw err;
  });

  return {
    url,
    async stop() {
      // On SIGTERM Gotenberg kills LibreOffice but exits without reaping it,
      // leaving a zombie until init gets to it (over a second on some VMs).
      // Killed first, LibreOffice is reaped by the still running Gotenberg.
      const pids = processesUsing(tempDir);
      kill(pids);
      await waitFor(async () => pids.every((pid) => !existsSync(`/proc/${pid}`)), {
        timeoutMs: 2_000,
        what: "LibreOffice to exit",
      }).catch(() => {}); // a zombie is dead already: carry on
      await daemon.stop();
      kill(processesUsing(tempDir)); // anything started meanwhile
      liveDirs.delete(tempDir);
    },
  };
}

// Temp dirs of running instances: if the test process exits without stop(),
// daemon.ts SIGKILLs Gotenberg, which orphans LibreOffice (own process group).
const liveDirs = new Set<string>();
process.on("exit", () => {
  for (const dir of liveDirs) kill(processesUsing(dir));
});

/** Pids of the processes whose command line mentions `dir` (LibreOffice, unoconv). */
function processesUsing(dir: string): number[] {
  if (!dir) return [];
  return readdirSync("/proc")
    .map(Number)
    .filter((pid) => {
      if (!Number.isInteger(pid) || pid === process.pid) return false;
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir);
      } catch {
        return false; // gone meanwhile
      }
    });
}

function kill(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

function onPath(name: string): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not in this directory.
    }
  }
  throw new Error(`${name} not found on PATH: run scripts/testenv/setup.sh`);
}
