import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

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

/**
 * Kills the process groups whose processes name `directory` on their command
 * line (a LibreOffice profile under it), but this process's own: the groups an
 * earlier run left there. "exit" never comes when V8 aborts (out of memory) or
 * the process is killed, and the groups outlive it, holding their profiles and
 * memory. Reads /proc; where there is none, reaps nothing. Returns the groups killed.
 */
export function reapGroupsIn(directory: string): number {
  const names = [directory, pathToFileURL(directory).href];
  const own = groupOf("self");
  const groups = new Set<number>();
  for (const pid of processIds()) {
    const commandLine = readProc(`${pid}/cmdline`);
    if (!commandLine || !names.some((name) => commandLine.includes(name))) continue;
    const group = groupOf(pid);
    if (group && group !== own) groups.add(group);
  }
  for (const group of groups) killGroup(group);
  return groups.size;
}

function processIds(): string[] {
  try {
    return readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(`/proc/${path}`, "latin1");
  } catch {
    return undefined; // gone meanwhile, or no /proc
  }
}

/** The process group of a process (/proc/PID/stat's fifth field, after the command in parentheses). */
function groupOf(pid: string): number | undefined {
  const stat = readProc(`${pid}/stat`);
  return stat ? Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) : undefined;
}
