/**
 * A package under clients/ as it ships: `npm pack` of its directory (its
 * prepack builds dist/), installed from the tarball into a fresh project, or
 * globally under a prefix, in a temporary directory outside the repository
 * (nothing there can resolve this checkout's node_modules). Needs npm, and the
 * package's dependencies from the npm cache or the registry.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** The directory of clients/<name>/. */
export const packageDir = (name: "telemetry" | "client" | "cli") => fileURLToPath(new URL(`../../clients/${name}/`, import.meta.url));
export const TELEMETRY_PACKAGE_DIR = packageDir("telemetry");
export const telemetryManifest = manifestOf(TELEMETRY_PACKAGE_DIR);

export function manifestOf(dir: string): { name: string; version: string } {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; version: string };
}

/** Child processes get no TypeScript loader from the test runner's environment. */
export const plainEnv = { ...process.env, NODE_OPTIONS: "" };

export interface PackResult {
  readonly filename: string;
  readonly size: number;
  readonly files: readonly { readonly path: string }[];
}

export interface PackedPackage {
  /** The temporary directory holding the tarball and the project. */
  readonly work: string;
  readonly pack: PackResult;
  /** The consumer project the tarball is installed in (or the global prefix). */
  readonly project: string;
  /** The installed package's directory. */
  readonly installed: string;
  remove(): void;
}

/** `npm pack` of `dir` into `work`. */
async function packInto(dir: string, work: string): Promise<PackResult> {
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], { cwd: dir, env: plainEnv, maxBuffer: 8 << 20 });
  return (JSON.parse(stdout) as [PackResult])[0];
}

/**
 * The package in `dir` packed and installed: into a fresh ESM project, or
 * with `global`, as `npm install -g` does, under a prefix of its own
 * (`<project>/bin` then holds its commands).
 */
export async function installPacked(dir: string, { global = false } = {}): Promise<PackedPackage> {
  const manifest = manifestOf(dir);
  const work = mkdtempSync(join(tmpdir(), `${manifest.name.split("/").pop()}-tarball-`));
  try {
    const pack = await packInto(dir, work);
    const project = join(work, global ? "global" : "consumer");
    mkdirSync(project);
    if (!global) writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    const install = ["install", ...(global ? ["--global", "--prefix", project] : []), "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", join(work, pack.filename)];
    await run("npm", install, { cwd: global ? work : project, env: plainEnv, maxBuffer: 8 << 20 });
    const installed = join(project, ...(global ? ["lib"] : []), "node_modules", ...manifest.name.split("/"));
    return { work, pack, project, installed, remove: () => rmSync(work, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

export const installPackedTelemetryClient = () => installPacked(TELEMETRY_PACKAGE_DIR);

/**
 * How a consumer's TypeScript may be set up: every module resolution a
 * published package must serve (node10 reads `types`, node16/nodenext and
 * bundler read `exports`), and NodeNext in a browser (DOM) and in Node
 * (@types/node, from this checkout).
 */
export function consumerConfigs(): Record<string, object> {
  const strict = { strict: true, target: "ES2022", noEmit: true, skipLibCheck: false };
  const nodeTypes = { typeRoots: [fileURLToPath(new URL("../../node_modules/@types", import.meta.url))], types: ["node"] };
  return {
    "nodenext-browser": { ...strict, module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022", "DOM", "DOM.Iterable"], types: [] },
    "nodenext-node": { ...strict, module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"], ...nodeTypes },
    node16: { ...strict, module: "Node16", moduleResolution: "Node16", lib: ["ES2022", "DOM", "DOM.Iterable"], types: [] },
    bundler: { ...strict, module: "ESNext", moduleResolution: "bundler", lib: ["ES2022", "DOM", "DOM.Iterable"], types: [] },
    node10: { ...strict, module: "CommonJS", moduleResolution: "node10", esModuleInterop: true, lib: ["ES2022", "DOM", "DOM.Iterable"], types: [] },
  };
}

/**
 * Type-checks `consumer.ts` in `project` (and `others`, more modules by file
 * name) under each of consumerConfigs() (or those named in `only`); resolves with, per configuration, the
 * files tsc read from the installed package `name` (they must be declarations
 * only), or rejects with tsc's output.
 */
export async function typecheckConsumer(project: string, name: string, source: string, others: Record<string, string> = {}, only?: string[]): Promise<Record<string, string[]>> {
  const files = { "consumer.ts": source, ...others };
  for (const [file, text] of Object.entries(files)) writeFileSync(join(project, file), text);
  const read: Record<string, string[]> = {};
  for (const [config, options] of Object.entries(consumerConfigs()).filter(([config]) => !only || only.includes(config))) {
    writeFileSync(join(project, `tsconfig.${config}.json`), JSON.stringify({ compilerOptions: options, files: Object.keys(files) }));
    const checked = await run(process.execPath, [tsc, "-p", `tsconfig.${config}.json`, "--listFiles"], { cwd: project, env: plainEnv, maxBuffer: 16 << 20 }).catch(
      (error: { stdout?: string }) => {
        throw new Error(`${config}: tsc failed\n${error.stdout ?? String(error)}`);
      },
    );
    read[config] = checked.stdout.split("\n").filter((line) => line.includes(`/node_modules/${name}/`));
  }
  return read;
}
