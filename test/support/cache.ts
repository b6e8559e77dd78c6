import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** Same default as scripts/testenv/setup.sh. */
export function cacheDir(): string {
  return resolve(process.env.DOCSERVICE_CACHE || join(homedir(), ".cache", "docservice"));
}

/** Absolute path of a binary installed by scripts/testenv/setup.sh. */
export function cacheBin(name: string): string {
  const path = join(cacheDir(), "bin", name);
  if (!existsSync(path)) {
    throw new Error(`${path} not found: run scripts/testenv/setup.sh`);
  }
  return path;
}
