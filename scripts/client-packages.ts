import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** The npm packages published from this checkout besides the root: each directory under clients/ with a package.json (relative paths). */
export function clientPackageDirs(root: string): string[] {
  return readdirSync(join(root, "clients"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, "clients", entry.name, "package.json")))
    .map((entry) => join("clients", entry.name))
    .sort();
}
