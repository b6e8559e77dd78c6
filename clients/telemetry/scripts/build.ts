/**
 * Builds the published form of @docservice/telemetry into dist/: index.js,
 * one ESM file bundled by esbuild (fflate stays an import, as the package's
 * dependency) under an SPDX license comment that bundlers keep, the type
 * declarations (*.d.ts) written by tsc from tsconfig.build.json, and the
 * third-party notices of what it installs; and the platform's LICENSE beside
 * package.json, where npm packs it. Run by the package's `prepack` (so `npm pack` and
 * `npm publish` always ship a fresh build) and by `npm run build:clients`.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const packageDir = fileURLToPath(new URL("../", import.meta.url));
const dist = fileURLToPath(new URL("../dist/", import.meta.url));
const root = fileURLToPath(new URL("../../../", import.meta.url));
const { name, version, license } = JSON.parse(readFileSync(`${packageDir}package.json`, "utf8")) as { name: string; version: string; license: string };

// A module renamed or removed since the last build must not linger in the tarball.
rmSync(dist, { recursive: true, force: true });

await build({
  entryPoints: [fileURLToPath(new URL("../index.ts", import.meta.url))],
  outfile: `${dist}index.js`,
  bundle: true,
  packages: "external",
  platform: "neutral",
  format: "esm",
  target: "es2020",
  banner: { js: `/*! ${name} ${version} | SPDX-License-Identifier: ${license} | LICENSE and THIRD-PARTY-NOTICES in the package */` },
  logLevel: "warning",
});

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const declarations = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: packageDir, stdio: "inherit" });
if (declarations.status !== 0) {
  console.error(`tsc -p clients/telemetry/tsconfig.build.json failed (${declarations.status ?? declarations.signal})`);
  process.exit(1);
}

const notices = spawnSync(
  process.execPath,
  ["--import", "tsx", `${root}scripts/third-party-licenses.ts`, "notices", packageDir, `${dist}THIRD-PARTY-NOTICES`, root],
  { cwd: packageDir, stdio: ["ignore", "ignore", "inherit"] },
);
if (notices.status !== 0) {
  console.error(`the third-party notices of ${name} could not be written (${notices.status ?? notices.signal})`);
  process.exit(1);
}
copyFileSync(`${root}LICENSE`, `${packageDir}LICENSE`);

console.error(`clients/telemetry/dist: ${readdirSync(dist).sort().join(", ")}`);
