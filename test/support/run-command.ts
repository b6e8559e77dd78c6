import { spawn } from "node:child_process";

export interface RunOptions {
  /** Added to this process's environment. */
  env?: Record<string, string>;
  cwd?: string;
  /** The command is killed (SIGTERM) after this long. */
  timeoutMs: number;
}

/** Runs a command without stdin; resolves with its exit code and everything it printed (stdout and stderr, interleaved). */
export function runCommand(command: string, args: string[], { env = {}, cwd, timeoutMs }: RunOptions): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
