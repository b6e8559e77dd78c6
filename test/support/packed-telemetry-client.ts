/**
 * The telemetry client as it ships: `npm pack` of clients/telemetry (its
 * prepack builds dist/), installed from the tarball into a fresh project in a
 * temporary directory outside the repository. Needs npm, and fflate from the
 * npm cache or the registry.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
export const TELEMETRY_PACKAGE_DIR = fileURLToPath(new URL("../../clients/telemetry/", import.meta.url));
export const telemetryManifest = JSON.parse(readFileSync(join(TELEMETRY_PACKAGE_DIR, "package.json"), "utf8")) as { name: string; version: string };

/** Child processes get no TypeScript loader from the test runner's environment. */
export const plainEnv = { ...process.env, NODE_OPTIONS: "" };

export interface PackResult {
  readonly filename: string;
  readonly files: readonly { readonly path: string }[];
}

export interface PackedTelemetryClient {
  /** The temporary directory holding the tarball and the project. */
  readonly work: string;
  readonly pack: PackResult;
  /** The consumer project the tarball is installed in. */
  readonly project: string;
  /** The installed package's directory. */
  readonly installed: string;
  remove(): void;
}

export async function installPackedTelemetryClient(): Promise<PackedTelemetryClient> {
  const work = mkdtempSync(join(tmpdir(), "telemetry-tarball-"));
  try {
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], { cwd: TELEMETRY_PACKAGE_DIR, env: plainEnv, maxBuffer: 8 << 20 });
    const [pack] = JSON.parse(stdout) as [PackResult];
    const project = join(work, "consumer");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "telemetry-consumer", private: true, type: "module" }));
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", join(work, pack.filename)], { cwd: project, env: plainEnv, maxBuffer: 8 << 20 });
    const installed = join(project, "node_modules", ...telemetryManifest.name.split("/"));
    return { work, pack, project, installed, remove: () => rmSync(work, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}
