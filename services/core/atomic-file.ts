import { randomBytes } from "node:crypto";
import { chmod, rename, rm, writeFile } from "node:fs/promises";

/** A name beside `path` for a file being written, unique to this process and call. */
export function temporaryPath(path: string): string {
  return `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
}

/**
 * Writes `contents` to `path` whole or not at all: to a temporary name beside
 * it, then renamed over it, so a reader never sees a file half written.
 * `mode`, when given, is set whatever the umask.
 */
export async function writeAtomically(path: string, contents: string | Uint8Array, mode?: number): Promise<void> {
  const temporary = temporaryPath(path);
  try {
    await writeFile(temporary, contents, { mode, flag: "wx" });
    if (mode !== undefined) await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
