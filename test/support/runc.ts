// Runs an OCI image archive under runc, without a container engine: `umoci
// unpack` makes a runtime bundle, runc runs it in the foreground. The settings
// mirror a Kubernetes pod under Pod Security "restricted" (the image's user, no
// capabilities, no new privileges, a read-only root with writable mounts), but
// the container shares the host's network namespace, so a test reaches it on
// loopback at ports it chose (see ports.ts). Needs root (runc, umoci).
import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** The parts of an OCI image config that decide what a container runs. */
export interface ImageConfig {
  User?: string;
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  Env?: string[];
  WorkingDir?: string;
  Volumes?: Record<string, unknown>;
  Labels?: Record<string, string>;
}

export interface Bundle {
  /** The bundle directory: config.json and rootfs/. */
  dir: string;
  /** The image's name in the archive (org.opencontainers.image.ref.name). */
  reference: string;
  /** The image's config, from the archive. */
  image: ImageConfig;
  /** The image's creation time (RFC 3339), from its config. */
  created: string | undefined;
  /** The manifest's layers, as a registry would serve them (compressed). */
  layers: { digest: string; size: number }[];
  /** umoci's runtime config.json, which each run starts from. */
  runtime: object;
  /** Deletes the bundle (stop its containers first). */
  remove(): void;
}

export interface Mount {
  /** Path inside the container. */
  destination: string;
  /** A host directory bound read-write; without one, an empty tmpfs (like an emptyDir). */
  source?: string;
}

export interface RunOptions {
  /** Replaces the image's Entrypoint (and drops its Cmd), as a pod's `command` does. */
  command?: string[];
  /** Replaces the image's Cmd, as a pod's `args` does. */
  args?: string[];
  /** Added to (or replacing) the image's environment. */
  env?: Record<string, string>;
  /** Replace the image's volumes (umoci mounts a tmpfs at each) at the same paths. */
  mounts?: Mount[];
  /** Default true, as readOnlyRootFilesystem in the manifests. */
  readOnlyRootFilesystem?: boolean;
  /** A CPU limit in cores, as a pod's resources.limits.cpu (a CFS quota per 100 ms); default none. */
  cpuLimitCores?: number;
}

export interface Container {
  id: string;
  /** Host PID of the container's process 1. */
  pid(): Promise<number>;
  /** What the container printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with runc's exit code when the container's process ends. */
  exited: Promise<number | null>;
  /** SIGTERM (the images' stop signal), SIGKILL after 20 s, then `runc delete`. Idempotent. */
  stop(): Promise<void>;
}

export type CanRun = { ok: true } | { ok: false; reason: string };

/** Whether runc and umoci can run images here (scripts/testenv/cluster-images.sh installs both). */
export function canRunRunc(): CanRun {
  if (process.platform !== "linux") return { ok: false, reason: `needs Linux (this is ${process.platform})` };
  if (process.getuid?.() !== 0) return { ok: false, reason: "needs root (runc, umoci unpack)" };
  for (const tool of ["runc", "umoci"]) {
    if (spawnSync(tool, ["--version"], { stdio: "ignore" }).status !== 0) return { ok: false, reason: `${tool} not found` };
  }
  return { ok: true };
}

// Containers and bundles still there when the test process exits.
const liveContainers = new Set<string>();
const liveBundles = new Set<string>();
process.on("exit", () => {
  for (const id of liveContainers) spawnSync("runc", ["delete", "--force", id], { stdio: "ignore" });
  for (const dir of liveBundles) rmSync(dir, { recursive: true, force: true });
});

/** Unpacks an OCI archive (its only image) into a new bundle in the temp dir. */
export async function unpack(archive: string): Promise<Bundle> {
  const dir = mkdtempSync(join(tmpdir(), "docservice-runc-"));
  liveBundles.add(dir);
  const remove = () => {
    liveBundles.delete(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const layout = join(dir, "layout");
    mkdirSync(layout);
    await execFileAsync("tar", ["-xf", archive, "-C", layout]);
    const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8"));
    if (index.manifests?.length !== 1) throw new Error(`${archive}: expected one image, found ${index.manifests?.length ?? 0}`);
    const descriptor = index.manifests[0];
    const blob = (digest: string) => JSON.parse(readFileSync(join(layout, "blobs", ...digest.split(":")), "utf8"));
    const manifest = blob(descriptor.digest);
    const config = blob(manifest.config.digest);
    const reference = descriptor.annotations?.["org.opencontainers.image.ref.name"];
    if (!reference) throw new Error(`${archive}: the image has no org.opencontainers.image.ref.name`);
    const bundle = join(dir, "bundle");
    await execFileAsync("umoci", ["unpack", "--image", `${layout}:${reference}`, bundle], { maxBuffer: 16 << 20 });
    rmSync(layout, { recursive: true, force: true });
    const runtime = JSON.parse(readFileSync(join(bundle, "config.json"), "utf8"));
    return { dir: bundle, reference, image: (config.config ?? {}) as ImageConfig, created: config.created, layers: manifest.layers, runtime, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

/** Starts a container from the bundle; resolves once runc has started it. */
export async function run(bundle: Bundle, options: RunOptions = {}): Promise<Container> {
  const id = `docservice-test-${randomBytes(4).toString("hex")}`;
  writeFileSync(join(bundle.dir, "config.json"), JSON.stringify(runtimeConfig(bundle, options), null, 2));

  const logFile = join(bundle.dir, "..", `${id}.log`);
  const fd = openSync(logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn("runc", ["run", "--bundle", bundle.dir, id], { stdio: ["ignore", fd, fd] });
  } finally {
    closeSync(fd);
  }
  liveContainers.add(id);
  const output = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");
  const exited = new Promise<number | null>((resolve) => {
    child.once("error", () => resolve(null));
    child.once("exit", (code) => resolve(code));
  });
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await execFileAsync("runc", ["kill", id, "TERM"]).catch(() => undefined);
      const killer = setTimeout(() => void execFileAsync("runc", ["kill", id, "KILL"]).catch(() => undefined), 20_000);
      await exited;
      clearTimeout(killer);
      await execFileAsync("runc", ["delete", "--force", id]).catch(() => undefined);
      liveContainers.delete(id);
    })());
  const pid = async () => {
    const { stdout } = await execFileAsync("runc", ["state", id]);
    return JSON.parse(stdout).pid as number;
  };

  // runc reports "running" once the container's process has been started.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = await execFileAsync("runc", ["state", id]).then(({ stdout }) => JSON.parse(stdout).status as string, () => undefined);
    if (state === "running") break;
    const code = await Promise.race([exited, new Promise<"waiting">((resolve) => setTimeout(() => resolve("waiting"), 100))]);
    if (code !== "waiting" || Date.now() > deadline) {
      await stop();
      throw new Error(`runc run ${id} did not start (${code === "waiting" ? "timed out" : `exit code ${code}`}):\n${output().slice(-4000)}`);
    }
  }
  return { id, pid, output, exited, stop };
}

/** umoci's config.json, changed as {@link RunOptions} and the module comment say (each run from umoci's, not the last run's). */
function runtimeConfig(bundle: Bundle, options: RunOptions): any {
  const config = structuredClone(bundle.runtime) as any;
  const { image } = bundle;
  const entrypoint = options.command ?? image.Entrypoint ?? [];
  const cmd = options.args ?? (options.command ? [] : image.Cmd ?? []);
  config.process.args = [...entrypoint, ...cmd];
  if (config.process.args.length === 0) throw new Error("the container has nothing to run (no entrypoint, command or args)");
  const env = new Map<string, string>();
  for (const entry of config.process.env ?? []) {
    const at = entry.indexOf("=");
    env.set(entry.slice(0, at), entry.slice(at + 1));
  }
  for (const [key, value] of Object.entries(options.env ?? {})) env.set(key, value);
  config.process.env = [...env].map(([key, value]) => `${key}=${value}`);
  config.process.terminal = false;
  // Pod Security "restricted": drop ALL capabilities, no privilege escalation.
  config.process.capabilities = { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] };
  config.process.noNewPrivileges = true;
  config.root = { path: "rootfs", readonly: options.readOnlyRootFilesystem ?? true };
  if (options.cpuLimitCores !== undefined) config.linux.resources = { ...config.linux.resources, cpu: { quota: Math.round(options.cpuLimitCores * 100_000), period: 100_000 } };
  // The host's network namespace: the test picks free ports on loopback.
  config.linux.namespaces = config.linux.namespaces.filter((ns: { type: string }) => ns.type !== "network");
  for (const mount of options.mounts ?? []) {
    config.mounts = config.mounts.filter((m: { destination: string }) => m.destination !== mount.destination);
    config.mounts.push(
      mount.source
        ? { destination: mount.destination, type: "bind", source: mount.source, options: ["rbind", "rw"] }
        : { destination: mount.destination, type: "tmpfs", source: "tmpfs", options: ["rw", "nosuid", "nodev", "mode=1777"] },
    );
  }
  return config;
}
