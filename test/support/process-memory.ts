import { readFileSync, writeFileSync } from "node:fs";

export interface ResidentMemory {
  /** Resident size now, in bytes. */
  rss: number;
  /** Its high-water mark, in bytes. */
  hwm: number;
}

/** Resident memory of a process (this one by default), from /proc/<pid>/status. */
export function residentMemory(pid: number | "self" = "self"): ResidentMemory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") };
}

export interface ResidentRise {
  /** How far the high-water mark rose above the resident size at the start, in bytes. */
  rise: number;
  /** The high-water mark at the end, in bytes. */
  peak: number;
  ms: number;
}

/**
 * Runs `work` and measures how far the process's resident high-water mark
 * rose above its resident size at the start: the mark is reset first
 * (/proc/<pid>/clear_refs, which needs the right to write it).
 */
export async function residentRise(pid: number | "self", work: () => Promise<unknown>): Promise<ResidentRise> {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = residentMemory(pid);
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  const peak = residentMemory(pid).hwm;
  return { rise: peak - before.rss, peak, ms };
}
