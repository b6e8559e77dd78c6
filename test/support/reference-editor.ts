/**
 * The reference editor as an integrator gets it: the npm package `superdoc`,
 * at the version the specification's reports were read from, fetched once with
 * `npm pack` into the cache. Its CDN build (one script defining the global
 * `SuperDoc`, and its stylesheet) is what a test page loads.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { cacheDir } from "./cache.js";

export const REFERENCE_EDITOR_VERSION = "2.11.0";

export interface ReferenceEditor {
  readonly script: string;
  readonly stylesheet: string;
}

export function referenceEditor(): ReferenceEditor {
  const dir = join(cacheDir(), "test", `superdoc-${REFERENCE_EDITOR_VERSION}`);
  const script = join(dir, "package", "dist-cdn", "superdoc.min.js");
  if (!existsSync(script)) {
    const work = `${dir}.partial`;
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    const tarball = execFileSync("npm", ["pack", `superdoc@${REFERENCE_EDITOR_VERSION}`, "--silent", "--pack-destination", work], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } }).trim().split("\n").at(-1)!;
    execFileSync("tar", ["-xzf", join(work, tarball), "-C", work, "package/dist-cdn/superdoc.min.js", "package/dist-cdn/superdoc.min.css", "package/package.json"]);
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
  }
  return { script: readFileSync(script, "utf8"), stylesheet: readFileSync(join(dir, "package", "dist-cdn", "superdoc.min.css"), "utf8") };
}
