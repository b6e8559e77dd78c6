import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

// LibreOffice runs in process groups of its own, which outlive this process
// unless killed: whatever way this process exits, take every one with it.
const live = new Set<number>();
process.once("exit", () => {
  for (const pid of live) killGroup(pid);
});

/** Starts a command as the leader of a new process group, killed with this process if still running. */
export function spawnGroup(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  const pid = child.pid;
  if (pid) {
    live.add(pid);
    // Stragglers (a soffice whose parent died) go with the group.
    child.once("exit", () => {
      live.delete(pid);
      killGroup(pid);
    });
  }
  return child;
}

/** Kills every process of the group led by `pid`. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // The group is already gone.
  }
}
