import { readFileSync } from "node:fs";
import { availableParallelism, totalmem } from "node:os";

// A container's limits, as its own cgroup shows them inside it (cgroup v2 first, then v1; runc mounts
// the container's cgroup there). Node sees the machine's CPUs and memory, not these.

type ReadFile = (path: string) => string;
const readText: ReadFile = (path) => readFileSync(path, "utf8");

/**
 * The cores this process may keep busy: the CPUs it may run on, or fewer
 * under a CPU limit (a pod's resources.limits.cpu), rounded up to a whole
 * core. With availableParallelism() alone, a pod limited to a fifth of a core
 * on a 2-core node ran two LibreOffice instances, each at a tenth, and
 * reported twice the room it had.
 */
export function availableCores(read: ReadFile = readText): number {
  const cpus = availableParallelism();
  const limit = cgroupCpuLimit(read);
  return limit === undefined ? cpus : Math.max(1, Math.min(cpus, Math.ceil(limit)));
}

/** The CPU limit in cores; undefined when there is none. */
export function cgroupCpuLimit(read: ReadFile = readText): number | undefined {
  const v2 = readOrUndefined(read, "/sys/fs/cgroup/cpu.max")?.split(/\s+/);
  if (v2) return v2[0] === "max" ? undefined : cores(Number(v2[0]), Number(v2[1]));
  const quota = readOrUndefined(read, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  const period = readOrUndefined(read, "/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  return quota === undefined || period === undefined ? undefined : cores(Number(quota), Number(period));
}

/** The memory limit in bytes; undefined when there is none. */
export function cgroupMemoryLimit(read: ReadFile = readText): number | undefined {
  for (const file of ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]) {
    const value = Number(readOrUndefined(read, file));
    // "max" (v2) reads as NaN; v1 writes "no limit" as a number near 2^63
    if (Number.isFinite(value) && value > 0 && value < totalmem()) return value;
  }
  return undefined;
}

/** A quota of CPU time per period, in cores; -1 (v1's "none") or nonsense is no limit. */
function cores(quota: number, period: number): number | undefined {
  return quota > 0 && period > 0 ? quota / period : undefined;
}

/** The file's text, trimmed; undefined where it is not (another cgroup version, or none). */
function readOrUndefined(read: ReadFile, path: string): string | undefined {
  try {
    return read(path).trim();
  } catch {
    return undefined;
  }
}
