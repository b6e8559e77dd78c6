// `npm run build [-- OUT_DIR]`: compiles the runtime code (services, gen,
// operator; no tests) to JavaScript in OUT_DIR (default dist/), mirroring the
// source tree, so that an image runs it with plain node and no tsx:
//
//   node dist/services/main.js <role>
//   node dist/operator/main.js
//
// Beside the JavaScript it writes OUT_DIR/package.json ("type": "module", the
// version services/core/version.ts reads at ../../package.json) and copies the
// files the code reads next to itself at runtime (the operator's default
// sizing profile), so OUT_DIR needs only node_modules beside or above it.
// Plain JavaScript, run by the pinned Node 24 (scripts/with-node.sh).
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const out = resolve(ROOT, process.argv[2] ?? "dist");
/**
 * Files the compiled code reads relative to its own location (source path,
 * relative to the root): the operator's sizing profile, and the API reference
 * page's renderer, a browser bundle from a devDependency that the gateway
 * finds with Node's resolution from dist/ (its license and its list of what it
 * bundles go along; the images' notices include them).
 */
const ASSETS = [
  "loadtest/sizing-profile.json",
  "node_modules/redoc/package.json",
  "node_modules/redoc/LICENSE",
  "node_modules/redoc/bundles/redoc.standalone.js",
  "node_modules/redoc/bundles/redoc.standalone.js.LICENSE.txt",
];

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

// OUT_DIR is emptied first; refuse to empty anything but an earlier build.
if (existsSync(out) && readdirSync(out).length > 0) {
  const previous = join(out, "package.json");
  const ours = existsSync(previous) && JSON.parse(readFileSync(previous, "utf8")).docserviceBuild === true;
  if (!ours || resolve(out) === resolve(ROOT)) {
    console.error(`build: ${out} is not empty and not an earlier build; refusing to replace it`);
    process.exit(1);
  }
}
rmSync(out, { recursive: true, force: true });

const started = Date.now();
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const compiled = spawnSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", out], { cwd: ROOT, stdio: "inherit" });
if (compiled.status !== 0) {
  console.error(`build: tsc failed (${compiled.status ?? compiled.signal})`);
  process.exit(1);
}

for (const asset of ASSETS) {
  mkdirSync(dirname(join(out, asset)), { recursive: true });
  cpSync(join(ROOT, asset), join(out, asset));
}
const manifest = {
  name: pkg.name,
  version: pkg.version,
  private: true,
  description: `${pkg.description} (compiled by npm run build)`,
  type: "module",
  engines: pkg.engines,
  docserviceBuild: true,
};
writeFileSync(join(out, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);

for (const entry of ["services/main.js", "operator/main.js"]) {
  if (!existsSync(join(out, entry))) {
    console.error(`build: ${entry} is missing from ${out}`);
    process.exit(1);
  }
}
console.error(`build: compiled to ${relative(process.cwd(), out) || "."} in ${((Date.now() - started) / 1000).toFixed(1)} s with Node ${process.version}`);
