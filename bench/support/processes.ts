/**
 * /proc helpers for the benchmarks (bench:convert, bench:collect, bench:sign):
 * a benchmark's own process tree, the CPU a process or its main thread used,
 * whether it is gone after a stop, and how much CPU other processes took
 * meanwhile (the machine has 2 cores; anything else running skews timings).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const CLOCK_TICKS_PER_S = 100; // getconf CLK_TCK on Linux x86-64

interface Stat {
  pid: number;
  ppid: number;
  /** utime + stime, in seconds. */
  cpuS: number;
  /** Process start time in ticks since boot: tells a reused pid apart. */
  start: number;
}

/** `/proc/PID/stat`, or with `thread` that thread's (`/proc/PID/task/TID/stat`). */
function stat(pid: number, thread?: number): Stat | undefined {
  try {
    const text = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: split after its last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state); utime = field 14, stime = field 15, starttime = field 22.
    return { pid, ppid: Number(fields[1]), cpuS: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S, start: Number(fields[19]) };
  } catch {
    return undefined; // gone meanwhile
  }
}

function allStats(): Stat[] {
  return readdirSync("/proc")
    .map(Number)
    .filter((pid) => Number.isInteger(pid))
    .map((pid) => stat(pid))
    .filter((s): s is Stat => s !== undefined);
}

/** CPU seconds (user + system, every thread) a process used so far; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  return stat(pid)?.cpuS ?? 0;
}

/** CPU seconds a process's main thread (the one whose id is the pid) used so far; 0 once it is gone. */
export function mainThreadCpuSeconds(pid: number): number {
  return stat(pid, pid)?.cpuS ?? 0;
}

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
  } catch {
    return "";
  }
}

/** Pids of every live descendant of `root` (not `root` itself). */
export function descendants(root: number, stats: Stat[] = allStats()): number[] {
  const children = new Map<number, number[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s.pid]);
  const found: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    found.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** Waits until none of `pids` exists (zombies count as gone); returns those still there after the timeout. */
export async function waitGone(pids: number[], timeoutMs = 15_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pids.filter((pid) => existsSync(`/proc/${pid}`) && !isZombie(pid));
    if (left.length === 0 || Date.now() >= deadline) return left;
    await sleep(100);
  }
}

function isZombie(pid: number): boolean {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** LibreOffice / unoserver / Gotenberg processes that are not this benchmark's. */
export function foreignConverters(): Array<{ pid: number; command: string }> {
  const ours = new Set(descendants(process.pid));
  return readdirSync("/proc")
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid !== process.pid && !ours.has(pid))
    .map((pid) => ({ pid, command: commandLine(pid) }))
    .filter(({ command }) => /soffice\.bin|unoserver|gotenberg/.test(command));
}

interface CpuSnapshot {
  /** Busy and total jiffies of the whole machine (/proc/stat "cpu" line). */
  busy: number;
  total: number;
  /** CPU seconds so far of each process outside this benchmark's tree, by pid:start. */
  foreign: Map<string, number>;
}

function snapshot(): CpuSnapshot {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line;
  const busy = user + nice + system + irq + softirq + steal;
  const stats = allStats();
  const ours = new Set([process.pid, ...descendants(process.pid, stats)]);
  const foreign = new Map<string, number>();
  for (const s of stats) if (!ours.has(s.pid)) foreign.set(`${s.pid}:${s.start}`, s.cpuS);
  return { busy, total: busy + idle + iowait, foreign };
}

export interface CpuUse {
  /** Share of all cores busy over the interval, 0..1. */
  machineBusy: number;
  /** CPU seconds used by processes outside this benchmark's tree over the interval (approximate: misses ones that both started and ended inside it). */
  foreignCpuS: number;
}

/** Starts measuring; the returned function ends the interval. */
export function measureCpu(): () => CpuUse {
  const before = snapshot();
  return () => {
    const after = snapshot();
    let foreignCpuS = 0;
    for (const [key, cpuS] of after.foreign) foreignCpuS += cpuS - (before.foreign.get(key) ?? 0);
    const total = after.total - before.total;
    return { machineBusy: total > 0 ? (after.busy - before.busy) / total : 0, foreignCpuS };
  };
}

/**
 * Waits until the machine has been quiet (all cores together less than
 * `maxBusy` busy) over one `windowMs` window, or until `timeoutMs`; call it
 * while this benchmark's own processes are idle. Returns how long it waited
 * and the busy share of the last window.
 */
export async function waitQuiet({ maxBusy = 0.15, windowMs = 2000, timeoutMs = 180_000 } = {}): Promise<{ waitedMs: number; busy: number; quiet: boolean }> {
  const started = Date.now();
  for (;;) {
    const end = measureCpu();
    await sleep(windowMs);
    const busy = end().machineBusy;
    if (busy < maxBusy || Date.now() - started >= timeoutMs) return { waitedMs: Date.now() - started - windowMs, busy, quiet: busy < maxBusy };
  }
}
