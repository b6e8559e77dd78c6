/**
 * Builds the published form of @docservice/telemetry into dist/: index.js,
 * one ESM file bundled by esbuild (fflate stays an import, as the package's
 * dependency), and the type declarations (*.d.ts) written by tsc from
 * tsconfig.build.json. Run by the package's `prepack` (so `npm pack` and
 * `npm publish` always ship a fresh build) and by `npm run build:clients`.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const packageDir = fileURLToPath(new URL("../", import.meta.url));
const dist = fileURLToPath(new URL("../dist/", import.meta.url));

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
  logLevel: "warning",
});

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const declarations = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: packageDir, stdio: "inherit" });
if (declarations.status !== 0) {
  console.error(`tsc -p clients/telemetry/tsconfig.build.json failed (${declarations.status ?? declarations.signal})`);
  process.exit(1);
}

console.error(`clients/telemetry/dist: ${readdirSync(dist).sort().join(", ")}`);
