import { readFileSync } from "node:fs";

/** Whether process `pid` runs (a zombie does not: it only waits to be reaped). */
export function isAlive(pid: number): boolean {
  try {
    // "1234 (node) S 1 ...": the state follows the parenthesised command name.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
