// `npm run build [-- OUT_DIR]`: compiles the runtime code (services, gen,
// operator; no tests) to JavaScript in OUT_DIR (default dist/), mirroring the
// source tree, so that an image runs it with plain node and no tsx:
//
//   node dist/services/main.js <role>
//   node dist/operator/main.js
//
// Beside the JavaScript it writes OUT_DIR/package.json ("type": "module", the
// version services/core/version.ts reads at ../../package.json, and a digest
// of the sources it was built from) and copies the files the code reads next
// to itself at runtime (the operator's default sizing profile), so OUT_DIR
// needs only node_modules beside or above it.
//
// `--when-stale` builds only when the sources' digest differs from OUT_DIR's,
// one build at a time (flock on OUT_DIR.lock): the tests run the services they
// start from dist/ (test/support/compiled-platform.ts), and several test files
// may ask at once.
// Plain JavaScript, run by the pinned Node 24 (scripts/with-node.sh).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const whenStale = args.includes("--when-stale");
const out = resolve(ROOT, args.find((arg) => !arg.startsWith("--")) ?? "dist");
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

/** Every file the build reads from the checkout: the compiled trees (tests excluded, as tsconfig.build.json does), their configuration, the assets and this script. */
function sourceFiles() {
  const files = ["package.json", "tsconfig.json", "tsconfig.build.json", "scripts/build.mjs", ...ASSETS];
  for (const tree of ["services", "gen", "operator"]) {
    for (const entry of readdirSync(join(ROOT, tree), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && !entry.name.endsWith(".test.ts")) files.push(relative(ROOT, join(entry.parentPath, entry.name)));
    }
  }
  return files.sort();
}

function sourcesDigest() {
  const hash = createHash("sha256");
  for (const file of sourceFiles()) hash.update(`${file}\0`).update(readFileSync(join(ROOT, file))).update("\0");
  return hash.digest("hex");
}

/** OUT_DIR/package.json as an earlier build wrote it, if there is one. */
function previousManifest() {
  const previous = join(out, "package.json");
  return existsSync(previous) ? JSON.parse(readFileSync(previous, "utf8")) : undefined;
}

if (whenStale && !process.env.DOCSERVICE_BUILD_LOCKED) {
  // the test file that waited for the lock then finds the build current
  const locked = spawnSync("flock", [`${out}.lock`, process.execPath, ...process.argv.slice(1)], { stdio: "inherit", env: { ...process.env, DOCSERVICE_BUILD_LOCKED: "1" } });
  process.exit(locked.status ?? 1);
}
const sources = sourcesDigest();
if (whenStale && previousManifest()?.docserviceSources === sources) process.exit(0);

// OUT_DIR is emptied first; refuse to empty anything but an earlier build.
if (existsSync(out) && readdirSync(out).length > 0) {
  const ours = previousManifest()?.docserviceBuild === true;
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
  docserviceSources: sources,
};
writeFileSync(join(out, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);

for (const entry of ["services/main.js", "operator/main.js"]) {
  if (!existsSync(join(out, entry))) {
    console.error(`build: ${entry} is missing from ${out}`);
    process.exit(1);
  }
}
console.error(`build: compiled to ${relative(process.cwd(), out) || "."} in ${((Date.now() - started) / 1000).toFixed(1)} s with Node ${process.version}`);
