/**
 * Builds the published form of the npm package in the current directory (one
 * under clients/), run by its `prepack` (so `npm pack` and `npm publish`
 * always ship a fresh build) and by `npm run build:clients` for all of them:
 *
 * - a library (no `bin`): dist/index.js, index.ts bundled by esbuild into one
 *   ESM file for browsers and Node (its npm dependencies stay imports), and
 *   the type declarations (dist/*.d.ts) tsc writes from tsconfig.build.json;
 * - a command (`bin`): dist/<name>.js for each bin, <name>.ts bundled for
 *   Node with what it imports from this checkout (the typed client included),
 *   its npm dependencies left as imports, and a `#!/usr/bin/env node` line.
 *
 * Each file starts with an SPDX license comment that bundlers keep; the
 * package gets the third-party notices of what it installs
 * (dist/THIRD-PARTY-NOTICES) and the platform's LICENSE beside package.json,
 * where npm packs it.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

interface Manifest {
  name: string;
  version: string;
  license: string;
  bin?: Record<string, string>;
}

const packageDir = process.cwd();
const dist = join(packageDir, "dist");
const root = fileURLToPath(new URL("..", import.meta.url));
const { name, version, license, bin } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as Manifest;
const legal = `/*! ${name} ${version} | SPDX-License-Identifier: ${license} | LICENSE and THIRD-PARTY-NOTICES in the package */`;

/** Runs a Node script to the end; exits this build when it fails. */
function runOrExit(what: string, args: string[]): void {
  const result = spawnSync(process.execPath, args, { cwd: packageDir, stdio: ["ignore", "ignore", "inherit"] });
  if (result.status !== 0) {
    console.error(`${name}: ${what} failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
}

// A module renamed or removed since the last build must not linger in the tarball.
rmSync(dist, { recursive: true, force: true });

if (bin) {
  for (const [command, path] of Object.entries(bin)) {
    await build({
      entryPoints: [join(packageDir, `${command}.ts`)],
      outfile: join(packageDir, path),
      bundle: true,
      // npm installs the package's dependencies; what the command imports from this checkout is bundled
      packages: "external",
      platform: "node",
      format: "esm",
      target: "node20",
      banner: { js: `#!/usr/bin/env node\n${legal}` },
      logLevel: "warning",
    });
  }
} else {
  await build({
    entryPoints: [join(packageDir, "index.ts")],
    outfile: join(dist, "index.js"),
    bundle: true,
    packages: "external",
    platform: "neutral",
    format: "esm",
    target: "es2020",
    banner: { js: legal },
    logLevel: "warning",
  });
  runOrExit("tsc -p tsconfig.build.json", [createRequire(import.meta.url).resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"]);
}

runOrExit("writing the third-party notices", ["--import", "tsx", join(root, "scripts/third-party-licenses.ts"), "notices", packageDir, join(dist, "THIRD-PARTY-NOTICES"), "--installed", root]);
copyFileSync(join(root, "LICENSE"), join(packageDir, "LICENSE"));

console.error(`${basename(packageDir)}/dist: ${readdirSync(dist).sort().join(", ")}`);
