// What a test node (test/support/kube-node.ts) holds of the machine beyond its
// own processes: a lock (one node per machine at a time), a cgroup in every
// hierarchy, the CNI bridge, iptables chains, a few sysctls, mounts and
// directories. Claiming the host cleans up what a crashed earlier node left;
// releasing it puts everything back as it was at the claim.
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync, writeFileSync,
} from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { BRIDGE, CGROUP_ROOT, CNI_NETWORK } from "./kube-node-config.js";
import { whileWaiting } from "./machine-share.js";
import { isAlive } from "./process-alive.js";

/** Every temp dir of a node (its data dir and its daemons' dirs) starts with this. */
export const NODE_DIR_PREFIX = join(tmpdir(), "docservice-kube_node_");
const LOCK = join(tmpdir(), "docservice-kube-node.lock");
const IPTABLES = ["iptables", "ip6tables"];
const TABLES = ["filter", "nat", "mangle", "raw"];
/** Sysctls that kubelet, kube-proxy or the bridge plugin set. */
const SYSCTLS = [
  "net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet", "net/ipv6/conf/all/forwarding",
  "net/bridge/bridge-nf-call-iptables", "net/bridge/bridge-nf-call-ip6tables",
  "vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
  "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
];
/**
 * Directories outside the node's own where containerd (shim sockets), libcni
 * (its result cache) and kubelet (log links, the device plugin socket) write
 * whatever they are configured with. Shared with any other container runtime
 * on the machine: only the node's own entries are removed, and a directory
 * only if it is empty and did not exist before.
 */
const HOST_DIRS = ["/run/containerd", "/var/lib/cni", "/var/log/containers", "/var/log/pods", "/var/lib/kubelet"];

/** What the lock file records of the host as it was before the node. */
interface HostState {
  pid: number;
  /** "iptables nat" -> chains */
  chains: Record<string, string[]>;
  sysctls: Record<string, string>;
  /** HOST_DIRS that did not exist. */
  absentDirs: string[];
}

export interface HostClaim {
  /** The node's data dir (removed on release). */
  dir: string;
  /** The IPv4 address of the host that pods reach it at. */
  address: string;
  /**
   * Kills what runs of the node, unmounts, removes its cgroups, bridge, chains
   * and dirs, restores sysctls, then runs `beforeUnlock` (a test's check that
   * nothing is left, made while no other node can start), and unlocks.
   */
  release(beforeUnlock?: () => void | Promise<void>): Promise<void>;
}

export type CanRun = { ok: true } | { ok: false; reason: string };

/**
 * Whether this machine can run the node at all: root, cgroups, the kernel
 * features kubelet and a bridge network need, an address. What
 * scripts/testenv/setup.sh installs is not checked here: its absence fails
 * startKubeNode instead of skipping a test.
 */
export function canRunContainers(): CanRun {
  const missing: string[] = [];
  if (process.platform !== "linux") return { ok: false, reason: `needs Linux (this is ${process.platform})` };
  if (process.getuid?.() !== 0) missing.push("needs root (containerd, kubelet, iptables)");
  const mounts = cgroupMounts();
  const controllers = new Set(mounts.flatMap((mount) => mount.controllers));
  const v2 = mounts.some((mount) => mount.type === "cgroup2" && mount.path === "/sys/fs/cgroup");
  const lacking = ["cpu", "cpuacct", "cpuset", "memory", "pids"].filter((c) => !controllers.has(c));
  if (!v2 && lacking.length > 0) missing.push(`cgroup controllers not mounted: ${lacking.join(", ")}`);
  if (!existsSync("/dev/kmsg")) missing.push("no /dev/kmsg (kubelet's OOM watcher reads it)");
  if (!readFileSync("/proc/filesystems", "utf8").includes("\toverlay\n")) missing.push("no overlay filesystem (containerd's snapshotter)");
  if (!existsSync("/proc/sys/net/bridge")) missing.push("no br_netfilter (/proc/sys/net/bridge): Services would not work between pods");
  if (spawnSync("iptables", ["-t", "nat", "-S"], { stdio: "ignore" }).status !== 0) missing.push("iptables -t nat does not work");
  if (!hostAddress()) missing.push("no IPv4 address besides loopback (pods reach the API server there)");
  return missing.length === 0 ? { ok: true } : { ok: false, reason: missing.join("; ") };
}

/** The source address of the default route, else the first non-loopback IPv4 address. */
export function hostAddress(): string | undefined {
  // Any address off the host's networks takes the default route (TEST-NET-2 here).
  const route = spawnSync("ip", ["-4", "-o", "route", "get", "198.51.100.1"], { encoding: "utf8" });
  const src = /\bsrc (\d+\.\d+\.\d+\.\d+)/.exec(route.stdout ?? "")?.[1];
  if (src && src !== "127.0.0.1") return src;
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((a) => a.family === "IPv4" && !a.internal);
    if (found) return found.address;
  }
  return undefined;
}

/** How long a test waits for another test's node to be stopped: the longest suite on a node takes minutes. */
const CLAIM_WAIT_MS = 20 * 60_000;

/**
 * Takes the machine-wide lock (waiting while a live process holds it: test
 * files run side by side, and one node runs at a time), cleans up after a
 * node whose process died, records the host's state, makes the node's data
 * dir and the cgroup that kubelet's --cgroup-root names.
 */
export async function claimHost(): Promise<HostClaim> {
  const address = hostAddress();
  if (!address) throw new Error("no IPv4 address besides loopback");
  const waitUntil = Date.now() + CLAIM_WAIT_MS;
  let state: HostState | undefined;
  while (!state) {
    const previous = await whileWaiting(async () => {
      let holder = readLock();
      while (holder && isAlive(holder.pid)) {
        if (Date.now() > waitUntil) {
          throw new Error(`a test Kubernetes node is still running on this machine after ${CLAIM_WAIT_MS / 60_000} minutes (process ${holder.pid}, lock ${LOCK}); one runs at a time`);
        }
        await sleep(2_000);
        holder = readLock();
      }
      return holder;
    });
    if (previous || leftoverDirs().length > 0) await cleanHost(previous);
    const candidate: HostState = {
      pid: process.pid,
      chains: Object.fromEntries(iptablesTables().map((key) => [key, chains(key)])),
      sysctls: Object.fromEntries(SYSCTLS.filter((key) => existsSync(`/proc/sys/${key}`)).map((key) => [key, readSysctl(key)])),
      absentDirs: HOST_DIRS.filter((dir) => !existsSync(dir)),
    };
    try {
      writeFileSync(LOCK, JSON.stringify(candidate), { flag: "wx" });
      state = candidate;
    } catch (err) {
      // another test took the lock between our look and our write: wait for its node in turn
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  try {
    const dir = mkdtempSync(`${NODE_DIR_PREFIX}data-`);
    makeCgroupRoot();
    let released: Promise<void> | undefined;
    return { dir, address, release: (beforeUnlock) => (released ??= cleanHost(state, beforeUnlock)) };
  } catch (err) {
    await cleanHost(state);
    throw err;
  }
}

function readLock(): HostState | undefined {
  try {
    return JSON.parse(readFileSync(LOCK, "utf8")) as HostState;
  } catch {
    return undefined;
  }
}

function leftoverDirs(): string[] {
  return readdirSync(tmpdir())
    .map((name) => join(tmpdir(), name))
    .filter((path) => path.startsWith(NODE_DIR_PREFIX));
}

/**
 * Puts the host back: every step runs even if an earlier one fails. With no
 * recorded state (no lock file), iptables and sysctls are left alone: there is
 * nothing to compare them with.
 */
async function cleanHost(state: HostState | undefined, beforeUnlock?: () => void | Promise<void>): Promise<void> {
  const errors: unknown[] = [];
  const step = async (fn: () => void | Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      errors.push(err);
    }
  };
  await step(killNodeProcesses);
  await step(unmountNodeDirs);
  await step(removeCgroups);
  await step(() => {
    if (existsSync(`/sys/class/net/${BRIDGE}`)) execFileSync("ip", ["link", "delete", BRIDGE]);
  });
  if (state) {
    for (const key of iptablesTables()) await step(() => removeNewChains(key, state.chains[key] ?? []));
    for (const [key, value] of Object.entries(state.sysctls)) await step(() => writeSysctl(key, value));
  }
  await step(removeHostEntries);
  if (state) {
    for (const dir of state.absentDirs) await step(() => removeEmptyDirs(dir));
  }
  for (const dir of leftoverDirs()) await step(() => rmSync(dir, { recursive: true, force: true }));
  if (beforeUnlock) await step(beforeUnlock);
  await step(() => rmSync(LOCK, { force: true }));
  if (errors.length > 0) throw new AggregateError(errors, `cleaning up the test node's host: ${errors.map(String).join("; ")}`);
}

/**
 * Removes what the node left in HOST_DIRS: libcni's cached results for its
 * network (and the loopback results of the same pods), kubelet's links to its
 * pod logs, and unix sockets that nothing listens on any more (shims', kubelet's).
 */
function removeHostEntries(): void {
  const results = "/var/lib/cni/results";
  const ours = existsSync(results) ? readdirSync(results).filter((name) => name.startsWith(`${CNI_NETWORK}-`)) : [];
  for (const name of ours) {
    // "docservice-kube-<sandbox id>-eth0"
    const sandbox = name.slice(CNI_NETWORK.length + 1).replace(/-[^-]+$/, "");
    rmSync(join(results, name), { force: true });
    rmSync(join(results, `cni-loopback-${sandbox}-lo`), { force: true });
  }
  const links = "/var/log/containers";
  for (const name of existsSync(links) ? readdirSync(links) : []) {
    const link = join(links, name);
    if (lstatSync(link).isSymbolicLink() && readlinkSync(link).startsWith(NODE_DIR_PREFIX)) rmSync(link);
  }
  // /proc/net/unix lists the path of every bound socket.
  const bound = new Set(readFileSync("/proc/net/unix", "utf8").split("\n").map((line) => line.split(" ").at(-1)));
  for (const dir of HOST_DIRS) {
    for (const file of walk(dir)) if (lstatSync(file).isSocket() && !bound.has(file)) rmSync(file);
  }
}

/** Removes DIR and the directories under it that are (or become) empty. */
function removeEmptyDirs(dir: string): void {
  if (!existsSync(dir) || !lstatSync(dir).isDirectory()) return;
  for (const entry of readdirSync(dir)) removeEmptyDirs(join(dir, entry));
  if (readdirSync(dir).length === 0) rmdirSync(dir);
}

/** Every file under DIR (none if it does not exist). */
function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path) : [path];
  });
}

/**
 * SIGKILLs the node's daemons and shims (their command lines name the node's
 * dirs) and the pods' processes (in its cgroup), until none is left.
 */
async function killNodeProcesses(): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const pids = new Set([...processesNamingNodeDirs(), ...cgroupProcesses()]);
    pids.delete(process.pid);
    if (pids.size === 0) return;
    if (attempt === 50) throw new Error(`processes of the test node survive SIGKILL: ${[...pids].join(", ")}`);
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await sleep(100);
  }
}

function processesNamingNodeDirs(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(NODE_DIR_PREFIX)) pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

interface CgroupMount {
  path: string;
  type: string;
  controllers: string[];
}

function cgroupMounts(): CgroupMount[] {
  return mountinfo()
    .filter((mount) => mount.type === "cgroup" || mount.type === "cgroup2")
    .map((mount) => ({ path: mount.path, type: mount.type, controllers: mount.options.split(",") }));
}

/** The node's cgroup in every hierarchy (cpuset needs its CPUs and memory nodes set before use). */
function makeCgroupRoot(): void {
  for (const mount of cgroupMounts()) {
    const dir = join(mount.path, CGROUP_ROOT);
    mkdirSync(dir, { recursive: true });
    if (mount.controllers.includes("cpuset") && mount.type === "cgroup") {
      for (const file of ["cpuset.cpus", "cpuset.mems"]) {
        writeFileSync(join(dir, file), readFileSync(join(mount.path, file)));
      }
    }
  }
}

/** Every cgroup dir of the node, deepest first. */
function nodeCgroups(): string[] {
  const dirs: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
    }
    dirs.push(dir);
  };
  for (const mount of cgroupMounts()) {
    const root = join(mount.path, CGROUP_ROOT);
    if (existsSync(root)) walk(root);
  }
  return dirs;
}

function cgroupProcesses(): number[] {
  return nodeCgroups().flatMap((dir) => {
    try {
      return readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

function removeCgroups(): void {
  for (const dir of nodeCgroups()) rmdirSync(dir);
}

interface Mount {
  path: string;
  type: string;
  options: string;
}

function mountinfo(): Mount[] {
  // "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
  const unescape = (path: string) => path.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [before, after] = line.split(" - ");
      const [type, , superOptions] = after!.split(" ");
      return { path: unescape(before!.split(" ")[4]!), type: type!, options: superOptions ?? "" };
    });
}

/** Unmounts everything at or under the node's dirs (pods' rootfs, shm, netns, volumes; kubelet's rshared root). */
function unmountNodeDirs(): void {
  for (let attempt = 0; attempt < 5; attempt++) {
    const mounts = mountinfo()
      .map((mount) => mount.path)
      .filter((path) => path.startsWith(NODE_DIR_PREFIX))
      .sort((a, b) => b.length - a.length);
    if (mounts.length === 0) return;
    for (const path of mounts) spawnSync("umount", ["--lazy", path], { stdio: "ignore" });
  }
  const left = mountinfo().filter((mount) => mount.path.startsWith(NODE_DIR_PREFIX));
  if (left.length > 0) throw new Error(`cannot unmount ${left.map((mount) => mount.path).join(", ")}`);
}

/** "iptables nat", ... for each table the host's iptables and ip6tables have. */
function iptablesTables(): string[] {
  return IPTABLES.flatMap((binary) =>
    TABLES.filter((table) => spawnSync(binary, ["-t", table, "-S"], { stdio: "ignore" }).status === 0).map(
      (table) => `${binary} ${table}`,
    ),
  );
}

function rules(key: string): string[] {
  const [binary, table] = key.split(" ");
  // stderr: iptables-nft warns of iptables-legacy tables.
  return execFileSync(binary!, ["-w", "-t", table!, "-S"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
    .split("\n")
    .filter(Boolean);
}

function chains(key: string): string[] {
  return rules(key).flatMap((rule) => (rule.startsWith("-N ") ? [rule.slice(3)] : []));
}

/**
 * Deletes the KUBE-* and CNI-* chains (kubelet's, kube-proxy's, the bridge
 * and portmap plugins') that did not exist at the claim, and every rule that
 * jumps to them, by rule number, last first.
 */
function removeNewChains(key: string, before: string[]): void {
  const [binary, table] = key.split(" ") as [string, string];
  const ours = new Set(chains(key).filter((chain) => /^(KUBE|CNI)-/.test(chain) && !before.includes(chain)));
  if (ours.size === 0) return;
  const numbers = new Map<string, number>();
  const jumps: { chain: string; number: number }[] = [];
  for (const rule of rules(key)) {
    const words = rule.split(" ");
    if (words[0] !== "-A") continue;
    const chain = words[1]!;
    const number = (numbers.get(chain) ?? 0) + 1;
    numbers.set(chain, number);
    const jump = words.findIndex((word) => word === "-j" || word === "-g");
    if (!ours.has(chain) && jump > 0 && ours.has(words[jump + 1]!)) jumps.push({ chain, number });
  }
  const iptables = (...args: string[]) => execFileSync(binary, ["-w", "-t", table, ...args], { stdio: "pipe" });
  for (const { chain, number } of jumps.reverse()) iptables("-D", chain, String(number));
  for (const chain of ours) iptables("-F", chain);
  for (const chain of ours) iptables("-X", chain);
}

function readSysctl(key: string): string {
  return readFileSync(`/proc/sys/${key}`, "utf8").trim();
}

function writeSysctl(key: string, value: string): void {
  if (existsSync(`/proc/sys/${key}`) && readSysctl(key) !== value) writeFileSync(`/proc/sys/${key}`, value);
}
