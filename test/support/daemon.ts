import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./wait.js";

export interface DaemonSpec {
  /** Used in error messages and the temp dir name. */
  name: string;
  command: string;
  /** Gets a fresh temp dir, removed on stop, for data files. */
  args: (dir: string) => string[];
  /** Set in its environment, beyond what this process has. */
  env?: Record<string, string>;
  /** Polled until true; a daemon that exits first fails the start at once. */
  ready: () => Promise<boolean>;
  timeoutMs?: number;
}

export interface Daemon {
  /** SIGTERM (or the signal given), wait for exit (SIGKILL after 10 s), remove the temp dir. */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** Pauses (SIGSTOP) or resumes (SIGCONT) the process. */
  signal(signal: "SIGSTOP" | "SIGCONT"): void;
  /** The end of its output (stdout and stderr), for an error message; none once stopped. */
  tail(): string;
}

// Daemons still running when the test process exits: kill them and remove
// their temp dirs, so a test that forgets stop() neither hangs nor leaks.
const live = new Map<ChildProcess, string>();
process.on("exit", () => {
  for (const [child, dir] of live) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Spawns a long-running process (output to a log file) and waits until it is ready. */
export async function startDaemon(spec: DaemonSpec): Promise<Daemon> {
  const dir = mkdtempSync(join(tmpdir(), `docservice-${spec.name.replace(/\W+/g, "_")}-`));
  const logFile = join(dir, "output.log");
  const fd = openSync(logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(spec.command, spec.args(dir), { stdio: ["ignore", fd, fd], env: { ...process.env, ...spec.env } });
  } finally {
    closeSync(fd);
  }
  live.set(child, dir);

  let exitReason: string | undefined;
  const exited = new Promise<void>((resolve) => {
    const onEnd = (reason: string) => {
      exitReason ??= reason;
      live.delete(child);
      resolve();
    };
    child.once("error", (err) => onEnd(err.message));
    child.once("exit", (code, signal) => onEnd(signal ? `signal ${signal}` : `exit code ${code}`));
  });

  const remove = () => rmSync(dir, { recursive: true, force: true });
  const tail = () => {
    try {
      return `${spec.command} output:\n${readFileSync(logFile, "utf8").slice(-4000)}`;
    } catch {
      return `${spec.command}: no output`;
    }
  };
  const stop = async (signal: "SIGTERM" | "SIGKILL" = "SIGTERM") => {
    if (exitReason === undefined) {
      child.ref();
      child.kill("SIGCONT"); // a paused process would not act on SIGTERM
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    remove();
  };

  try {
    await waitFor(async () => exitReason !== undefined || (await spec.ready()), {
      timeoutMs: spec.timeoutMs ?? 60_000,
      what: `${spec.name} to be ready`,
    });
    if (exitReason !== undefined) throw new Error(`${spec.name} stopped during startup (${exitReason})`);
  } catch (err) {
    const output = tail();
    await stop();
    throw new Error(`${(err as Error).message}\n${output}`, { cause: err });
  }

  // Let the test process exit even if stop() is never called (see "exit" above).
  child.unref();
  return {
    stop,
    signal: (signal) => {
      child.kill(signal);
      if (signal === "SIGSTOP") waitUntilStopped(child.pid!);
    },
    tail,
  };
}

/**
 * Returns once every thread of `pid` is stopped: a signal is delivered
 * asynchronously, and a broker thread already running on the other core
 * could still answer a request sent right after SIGSTOP.
 */
function waitUntilStopped(pid: number): void {
  const deadline = Date.now() + 5000;
  const stopped = () =>
    readdirSync(`/proc/${pid}/task`).every((task) => {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      return /^[tT]/.test(stat.slice(stat.lastIndexOf(")") + 2));
    });
  while (!stopped()) {
    if (Date.now() > deadline) throw new Error(`process ${pid} did not stop within 5 s of SIGSTOP`);
  }
}
