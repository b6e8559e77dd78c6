import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let checked = false;

/**
 * The path of `dist/<entry>` (e.g. "services/main.js"), the code as `npm run
 * build` compiles it and the images run it, rebuilt first if the sources
 * changed since (scripts/build.mjs --when-stale; `npm test` builds before its
 * first file). The tests start the platform's processes from it with plain
 * node: under tsx, whose hooks resolve and load every module of the process
 * on a thread of their own, a start took about twice the CPU.
 */
export function compiled(entry: string): string {
  if (!checked) {
    const build = spawnSync(process.execPath, ["scripts/build.mjs", "--when-stale"], { cwd: ROOT, encoding: "utf8" });
    if (build.status !== 0) throw new Error(`scripts/build.mjs --when-stale failed (${build.status ?? build.signal}):\n${build.stdout}${build.stderr}`);
    checked = true;
  }
  return join(ROOT, "dist", entry);
}
