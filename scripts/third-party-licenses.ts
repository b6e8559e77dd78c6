/**
 * `npm run licenses`: the licenses of the npm packages DocService ships, read
 * by license-checker-rseidelsohn from the installed tree and judged with
 * spdx-satisfies against the licenses that may be combined with an
 * AGPL-3.0-only work.
 *
 *   npm run licenses                  check the root's production dependencies (the images' /app/node_modules)
 *                                     and those of each package under clients/
 *   npm run licenses -- notices DIR OUT [--installed INSTALLED] [--bundled BUILD]
 *                                     write OUT, the third-party notices of the production dependencies of the
 *                                     package in DIR, as installed under INSTALLED (default: DIR), and of the
 *                                     packages a build copied into BUILD/node_modules (browser bundles the
 *                                     gateway serves), each with its license and the list of what it bundles
 *
 * A package whose license is missing, only guessed from a README, or not in
 * ALLOWED fails the check. A package that ships no license file gets the
 * standard text of its license (spdx-license-list) in the notices, marked as such.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as checker from "license-checker-rseidelsohn";
import spdxLicenses from "spdx-license-list/full.js";
import satisfies from "spdx-satisfies";
import { clientPackageDirs } from "./client-packages.js";

/**
 * Licenses whose code may be combined with AGPL-3.0-only code and conveyed
 * under it: permissive licenses, the weak copylefts whose terms the AGPL can
 * carry, and the GPL/AGPL themselves (AGPL-3.0 section 13).
 */
export const ALLOWED = [
  "0BSD",
  "AGPL-3.0-only",
  "AGPL-3.0-or-later",
  "Apache-2.0",
  "BlueOak-1.0.0",
  "BSD-2-Clause",
  "BSD-3-Clause",
  "CC0-1.0",
  "GPL-3.0-only",
  "GPL-3.0-or-later",
  "ISC",
  "LGPL-2.1-or-later",
  "LGPL-3.0-only",
  "LGPL-3.0-or-later",
  "MIT",
  "MIT-0",
  "MPL-2.0",
  "Python-2.0",
  "Unlicense",
  "Zlib",
];

export interface ShippedPackage {
  /** name@version */
  id: string;
  /** The SPDX expression the package states (a trailing * when license-checker guessed it). */
  license: string;
  repository?: string;
  publisher?: string;
  licenseText?: string;
}

/**
 * The production dependencies installed under `dir` (a directory with
 * package.json and node_modules), its own package left out; with `all`, its
 * devDependencies too (where the packages under clients/ find theirs).
 */
export async function shippedPackages(dir: string, all = false): Promise<ShippedPackage[]> {
  const own = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
  const found = await new Promise<checker.ModuleInfos>((resolve, reject) =>
    checker.init(
      { start: dir, production: !all, customPath: { licenses: "", repository: "", publisher: "", licenseFile: "", licenseText: "" } },
      (error, packages) => (error ? reject(error) : resolve(packages)),
    ),
  );
  return Object.entries(found)
    .filter(([id]) => id !== `${own.name}@${own.version}`)
    .map(([id, entry]) => ({
      id,
      license: Array.isArray(entry.licenses) ? `(${entry.licenses.join(" OR ")})` : (entry.licenses ?? "UNKNOWN"),
      repository: entry.repository || undefined,
      publisher: entry.publisher || undefined,
      // license-checker falls back to a README when there is no license file: that is no license text
      licenseText: entry.licenseFile && !/readme/i.test(entry.licenseFile) ? entry.licenseText : undefined,
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * The packages a build copied into `build`/node_modules (only the files it
 * serves): each one's license from its package.json, its LICENSE, and the
 * `*.LICENSE.txt` lists its bundles carry of what they hold.
 */
export function bundledPackages(build: string): ShippedPackage[] {
  const modules = join(build, "node_modules");
  if (!existsSync(modules)) return [];
  const dirs = readdirSync(modules).flatMap((name) => (name.startsWith("@") ? readdirSync(join(modules, name)).map((inner) => join(name, inner)) : [name]));
  return dirs.map((name) => {
    const dir = join(modules, name);
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; version: string; license?: string; repository?: string | { url?: string } };
    const texts = filesUnder(dir)
      .filter((path) => /(^|\/)(LICEN[CS]E(\.md|\.txt)?|[^/]+\.LICENSE\.txt)$/i.test(path))
      .sort()
      .map((path) => readFileSync(join(dir, path), "utf8").trim());
    return {
      id: `${manifest.name}@${manifest.version}`,
      license: manifest.license ?? "UNKNOWN",
      repository: typeof manifest.repository === "string" ? manifest.repository : manifest.repository?.url,
      licenseText: texts.length > 0 ? texts.join("\n\n") : undefined,
    };
  });
}

/** Paths of the files under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}

/** Why the package may not ship, or undefined when it may. */
export function licenseProblem(pkg: ShippedPackage): string | undefined {
  if (pkg.license.endsWith("*")) return `license guessed from its files (${pkg.license}), not stated in its package.json`;
  let allowed: boolean;
  try {
    allowed = satisfies(pkg.license, ALLOWED);
  } catch {
    return `license "${pkg.license}" is not an SPDX expression`;
  }
  if (!allowed) return `license ${pkg.license} cannot be combined with AGPL-3.0-only`;
  if (!pkg.licenseText && !standardTexts(pkg.license)) return `ships no license text, and ${pkg.license} has no standard text`;
  return undefined;
}

/**
 * For a package without a license file: the standard texts of the allowed
 * licenses its expression names (the ones it is used under), or undefined
 * when one has none.
 */
function standardTexts(license: string): string | undefined {
  const ids = [...new Set(license.match(/[A-Za-z0-9.+-]+/g) ?? [])].filter((id) => !["AND", "OR", "WITH"].includes(id) && ALLOWED.includes(id));
  const texts = ids.map((id) => spdxLicenses[id]?.licenseText);
  if (ids.length === 0 || texts.some((text) => !text)) return undefined;
  return `The package ships no license file; the standard text of ${ids.join(" and ")} follows.\n\n${texts.join("\n\n")}`;
}

/** The notices file: every package with its license and the license text it ships. */
export function noticesText(title: string, packages: ShippedPackage[]): string {
  const rule = "-".repeat(78);
  const parts = packages.map((pkg) =>
    [
      rule,
      `${pkg.id}`,
      `License: ${pkg.license}`,
      ...(pkg.repository ? [`Source: ${pkg.repository}`] : []),
      ...(pkg.publisher ? [`Publisher: ${pkg.publisher}`] : []),
      "",
      (pkg.licenseText ?? standardTexts(pkg.license) ?? "").trim(),
      "",
    ].join("\n"),
  );
  return `${title}\n\n${packages.length} packages, each with the license text it ships.\n\n${parts.join("\n")}`;
}

/** The npm dependencies (optional ones when installed) of the package in `dir`, resolved as Node resolves them from there, each with its own (transitively). */
export function dependencyClosure(dir: string): Set<string> {
  const seen = new Set<string>();
  const visit = (packageDir: string) => {
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
    const require = createRequire(join(packageDir, "package.json"));
    const optional = Object.keys(manifest.optionalDependencies ?? {});
    for (const name of new Set([...Object.keys(manifest.dependencies ?? {}), ...optional])) {
      const manifestPath = packageManifest(require, name);
      // an optional dependency for another platform is not installed, and does not ship
      if (manifestPath === undefined && optional.includes(name)) continue;
      if (manifestPath === undefined) throw new Error(`${name} (a dependency of ${packageDir}) is not installed`);
      const { version } = JSON.parse(readFileSync(manifestPath, "utf8")) as { version: string };
      const id = `${name}@${version}`;
      if (seen.has(id)) continue;
      seen.add(id);
      visit(dirname(manifestPath));
    }
  };
  visit(dir);
  return seen;
}

/** The package.json of `name` as resolved from `require`'s package (its exports may hide it, so the directories are looked in), if installed. */
function packageManifest(require: NodeJS.Require, name: string): string | undefined {
  for (const base of require.resolve.paths(name) ?? []) {
    const candidate = join(base, name, "package.json");
    try {
      readFileSync(candidate);
      return candidate;
    } catch {
      // not installed there: the next directory up
    }
  }
  return undefined;
}

async function check(root: string): Promise<number> {
  const shipped = await shippedPackages(root);
  let problems = 0;
  for (const pkg of shipped) {
    const problem = licenseProblem(pkg);
    if (problem) {
      problems++;
      console.error(`✗ ${pkg.id}: ${problem}`);
    }
  }
  const installed = await shippedPackages(root, true);
  for (const dir of clientPackageDirs(root)) {
    try {
      for (const pkg of packagesOf(installed, dependencyClosure(join(root, dir)))) {
        const problem = licenseProblem(pkg);
        if (problem) throw new Error(`${pkg.id}: ${problem}`);
      }
    } catch (error) {
      problems++;
      console.error(`✗ ${dir}: ${(error as Error).message}`);
    }
  }
  const counts = new Map<string, number>();
  for (const pkg of shipped) counts.set(pkg.license, (counts.get(pkg.license) ?? 0) + 1);
  console.log(`licenses: ${shipped.length} npm packages shipped: ${[...counts].sort((a, b) => b[1] - a[1]).map(([license, n]) => `${license} ${n}`).join(", ")}`);
  if (problems > 0) console.error(`licenses: ${problems} problem(s)`);
  else console.log("licenses: every package may ship with AGPL-3.0-only DocService");
  return problems > 0 ? 1 : 0;
}

/** The packages of `closure` (name@version ids) among those license-checker read; throws naming any it did not. */
function packagesOf(shipped: ShippedPackage[], closure: Set<string>): ShippedPackage[] {
  const missing = [...closure].filter((id) => !shipped.some((pkg) => pkg.id === id));
  if (missing.length > 0) throw new Error(`depends on ${missing.join(", ")}, which license-checker did not find installed`);
  return shipped.filter((pkg) => closure.has(pkg.id));
}

/**
 * Writes `out`, the notices of the production dependencies of the package in
 * `dir` as installed under `installed`: the same directory for an image's
 * pruned install (everything installed there), the checkout's root for a
 * package under clients/ (its dependencies among the root's).
 */
async function writeNotices(dir: string, installed: string, out: string, bundled?: string): Promise<void> {
  // an install of its own holds exactly what ships (the image's pruned one); under the root, only the package's dependencies do
  const installedPackages = installed === dir ? await shippedPackages(dir) : packagesOf(await shippedPackages(installed, true), dependencyClosure(dir));
  const shipped = [...installedPackages, ...(bundled ? bundledPackages(bundled) : [])];
  const problems = shipped.flatMap((pkg) => {
    const problem = licenseProblem(pkg);
    return problem ? [`✗ ${pkg.id}: ${problem}`] : [];
  });
  if (problems.length > 0) throw new Error(problems.join("\n"));
  const { name, version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; version: string };
  writeFileSync(out, noticesText(`Third-party software that ${name} ${version} installs (npm packages)`, shipped));
  console.log(`licenses: ${out}: ${shipped.length} packages`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { installed: { type: "string" }, bundled: { type: "string" } } });
  const [command = "check", dir, out] = positionals;
  if (command === "check") {
    process.exitCode = await check(root);
  } else if (command === "notices" && dir && out) {
    await writeNotices(dir, values.installed ?? dir, out, values.bundled);
  } else {
    console.error("usage: npm run licenses [-- check | -- notices DIR OUT [--installed INSTALLED] [--bundled BUILD]]");
    process.exit(2);
  }
}
