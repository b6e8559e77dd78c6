import { readdirSync, readFileSync } from "node:fs";

/** Resident memory of a process and all its descendants, from /proc (0 where /proc cannot tell). */
export function processTreeRssBytes(pid: number): number {
  let total = 0;
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.pop()!;
    try {
      const status = readFileSync(`/proc/${current}/status`, "utf8");
      total += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      pending.push(...childrenOf(current));
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}

/** Children of a process, whichever of its threads started them. */
export function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) => {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    return children ? children.split(/\s+/).map(Number) : [];
  });
}
