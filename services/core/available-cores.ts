import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/** Where a container's CPU limit shows, inside it: cgroup v2, then v1 (each a container's own cgroup, as runc mounts it). */
const CGROUP_V2_CPU_MAX = "/sys/fs/cgroup/cpu.max";
const CGROUP_V1_QUOTA = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us";
const CGROUP_V1_PERIOD = "/sys/fs/cgroup/cpu/cpu.cfs_period_us";

type ReadFile = (path: string) => string;

/**
 * The cores this process may keep busy: the CPUs it may run on, or fewer
 * under a cgroup CPU limit (a pod's resources.limits.cpu), rounded up to a
 * whole core. Node's availableParallelism() sees the CPUs but not the limit,
 * so a pod limited to a fifth of a core on a 2-core node ran two LibreOffice
 * instances, each at a tenth, and reported twice the room it had.
 */
export function availableCores(read: ReadFile = (path) => readFileSync(path, "utf8")): number {
  const cpus = availableParallelism();
  const limit = cgroupCpuLimit(read);
  return limit === undefined ? cpus : Math.max(1, Math.min(cpus, Math.ceil(limit)));
}

/** The cgroup's CPU limit in cores; undefined when it has none or shows none. */
export function cgroupCpuLimit(read: ReadFile): number | undefined {
  const v2 = attempt(() => read(CGROUP_V2_CPU_MAX).trim().split(/\s+/));
  if (v2) return v2[0] === "max" ? undefined : cores(Number(v2[0]), Number(v2[1]));
  const quota = attempt(() => Number(read(CGROUP_V1_QUOTA)));
  const period = attempt(() => Number(read(CGROUP_V1_PERIOD)));
  return quota === undefined || period === undefined ? undefined : cores(quota, period);
}

/** A quota of CPU time per period, in cores; -1 (v1's "none") or nonsense is no limit. */
function cores(quota: number, period: number): number | undefined {
  return quota > 0 && period > 0 ? quota / period : undefined;
}

function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
