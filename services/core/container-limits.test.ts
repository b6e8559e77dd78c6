import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { describe, test } from "node:test";
import { availableCores, cgroupCpuLimit, cgroupMemoryLimit } from "./container-limits.js";

/** A container's cgroup files as given; any other path does not exist. */
const files = (contents: Record<string, string>) => (path: string) => {
  if (!(path in contents)) throw Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" });
  return contents[path]!;
};

describe("a container's limits, from its cgroup", () => {
  test("cgroup v2: a limit in cores, none for max", () => {
    assert.equal(cgroupCpuLimit(files({ "/sys/fs/cgroup/cpu.max": "20000 100000\n" })), 0.2);
    assert.equal(cgroupCpuLimit(files({ "/sys/fs/cgroup/cpu.max": "250000 100000\n" })), 2.5);
    assert.equal(cgroupCpuLimit(files({ "/sys/fs/cgroup/cpu.max": "max 100000\n" })), undefined);
  });

  test("cgroup v1: a quota over its period, none for -1", () => {
    assert.equal(cgroupCpuLimit(files({ "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "50000\n", "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n" })), 0.5);
    assert.equal(cgroupCpuLimit(files({ "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n", "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n" })), undefined);
    assert.equal(cgroupCpuLimit(files({})), undefined);
  });

  test("a limit rounds up to whole cores, at least one, never more than the CPUs it may run on", () => {
    const cpus = availableParallelism();
    assert.equal(availableCores(files({ "/sys/fs/cgroup/cpu.max": "20000 100000" })), 1);
    assert.equal(availableCores(files({ "/sys/fs/cgroup/cpu.max": "100000 100000" })), 1);
    assert.equal(availableCores(files({ "/sys/fs/cgroup/cpu.max": "150000 100000" })), Math.min(cpus, 2));
    assert.equal(availableCores(files({ "/sys/fs/cgroup/cpu.max": `${(cpus + 4) * 100000} 100000` })), cpus);
    assert.equal(availableCores(files({ "/sys/fs/cgroup/cpu.max": "max 100000" })), cpus);
    assert.equal(availableCores(files({})), cpus);
  });

  test("memory: v2's bytes or max, v1's bytes or its near-2^63 for none", () => {
    assert.equal(cgroupMemoryLimit(files({ "/sys/fs/cgroup/memory.max": "536870912\n" })), 536870912);
    assert.equal(cgroupMemoryLimit(files({ "/sys/fs/cgroup/memory.max": "max\n" })), undefined);
    assert.equal(cgroupMemoryLimit(files({ "/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n" })), 1073741824);
    assert.equal(cgroupMemoryLimit(files({ "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n" })), undefined);
    assert.equal(cgroupMemoryLimit(files({})), undefined);
  });
});
