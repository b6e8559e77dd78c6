/**
 * A real single-node Kubernetes cluster for end-to-end tests: the control plane
 * of kube.ts (etcd, kube-apiserver) plus kube-controller-manager,
 * kube-scheduler, containerd, kubelet, kube-proxy, CoreDNS and metrics-server
 * (so HorizontalPodAutoscalers act on CPU and memory), all built or
 * installed by scripts/testenv/kubernetes.sh. Pods run for real (runc, a CNI
 * bridge, Services through iptables, cluster DNS); images come only from
 * {@link KubeNode.importImage}, so pods need `imagePullPolicy: Never`.
 *
 * CoreDNS runs as a Deployment behind the kube-dns Service, as in clusters
 * users run, rather than as a host process: the lookups pods make then take
 * the path theirs will (ClusterIP, kube-proxy, a pod), CoreDNS itself checks
 * ServiceAccount tokens, RBAC and the "kubernetes" Service, and it needs no
 * host port 53.
 *
 * One node runs per machine at a time (a lock file): the CNI bridge, the
 * iptables chains and the cgroup are machine-wide; the ports are free ones
 * picked per run. A node whose process died is cleaned up by the next start
 * (test/support/kube-node-host.ts). Needs root; see {@link canRunContainers}.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { promisify } from "node:util";
import { cacheBin, cacheDir } from "./cache.js";
import { startDaemon, type Daemon } from "./daemon.js";
import { kubectl } from "./kube.js";
import { aggregationArgs, startControlPlane, type ControlPlane } from "./kube-control-plane.js";
import {
  CLUSTER_DOMAIN, CNI_BIN_DIR, KUBERNETES_SERVICE_IP, NODE_NAME, RUNC, SERVICE_CIDR,
  METRICS_SERVER_HOST, cniConfig, containerdConfig, coreDnsManifests, kubeProxyConfig, kubeletConfig, metricsServerManifests, schedulerConfig,
} from "./kube-node-config.js";
import { canRunContainers, claimHost } from "./kube-node-host.js";
import { writeKubeconfig, type KubePki } from "./kube-pki.js";
import { freePort } from "./ports.js";
import { waitFor } from "./wait.js";

export { canRunContainers, type CanRun } from "./kube-node-host.js";
export { CLUSTER_DNS_IP, CLUSTER_DOMAIN, NODE_NAME } from "./kube-node-config.js";

const run = promisify(execFile);

export interface KubeNode {
  /** A kubeconfig (context "docservice-test", user in system:masters) for kubectl, helm and client-node. */
  kubeconfigPath: string;
  /** "https://HOST-IP:PORT": the host's own address, which pods reach too. */
  server: string;
  /** The Node's name. */
  nodeName: string;
  /** The cluster's CA, which the API server trusts for clients (as startKeda wants it). */
  pki: KubePki;
  /** The host's IPv4 address that pods reach it at, where a process on the host serves an aggregated API. */
  address: string;
  /**
   * Imports an OCI or Docker image archive into the node's containerd
   * (`ctr -n k8s.io images import`); resolves the image names imported.
   */
  importImage(archivePath: string): Promise<string[]>;
  /** Gives an imported image a second name (`ctr -n k8s.io images tag`), e.g. a new tag for a rolling update. */
  tagImage(source: string, target: string): Promise<void>;
  /**
   * Freezes (`ctr task pause`: the cgroup freezer) or thaws one container,
   * by the id a pod's status gives ("containerd://ID" or ID): a process that
   * stops answering without exiting, which no signal sent from inside its pod
   * can do to the container's first process.
   */
  freezeContainer(containerId: string, frozen: boolean): Promise<void>;
  /**
   * Deletes every pod and waits for kubelet to tear them down, stops every
   * process, unmounts, removes the bridge, the iptables chains, the cgroups
   * and the temp dirs, restores the sysctls it changed. Idempotent.
   * `beforeUnlock` runs once all that is done, while this process still holds
   * the machine's node lock: a test that checks the host is clean, before
   * another test's node may start on it.
   */
  stop(beforeUnlock?: () => void | Promise<void>): Promise<void>;
}

type NodeDaemon = Pick<Daemon, "stop" | "tail">;

const START_TIMEOUT_MS = 120_000;
const IMAGES = () => join(cacheDir(), "kube-node-images");

/** What scripts/testenv/kubernetes.sh installs for the node. */
const SETUP_FILES = () => [
  "/usr/bin/containerd", "/usr/bin/containerd-shim-runc-v2", "/usr/bin/ctr", RUNC,
  ...["bridge", "host-local", "loopback", "portmap"].map((plugin) => join(CNI_BIN_DIR, plugin)),
  ...["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubectl", "metrics-server"].map((name) =>
    join(cacheDir(), "bin", name),
  ),
  join(IMAGES(), "pause.tar"),
  join(IMAGES(), "coredns.tar"),
];

/**
 * Starts the node and resolves once it is Ready, CoreDNS answers and the
 * "default" ServiceAccount exists. Fails with the tail of the failing daemon's
 * output; everything started so far is stopped and cleaned up.
 */
export async function startKubeNode(): Promise<KubeNode> {
  const can = canRunContainers();
  if (!can.ok) throw new Error(`cannot run a Kubernetes node on this machine: ${can.reason}`);
  const missing = SETUP_FILES().filter((file) => !existsSync(file));
  if (missing.length > 0) throw new Error(`not found: ${missing.join(", ")}: run scripts/testenv/setup.sh`);
  const host = await claimHost();
  // In start order; stopped in reverse.
  const daemons: NodeDaemon[] = [];
  let plane: ControlPlane | undefined;
  let stopping: Promise<void> | undefined;
  const stopAll = async (beforeUnlock?: () => void | Promise<void>) => {
    const errors: unknown[] = [];
    for (const stop of [...[...daemons].reverse().map((d) => d.stop), () => plane?.stop(), () => host.release(beforeUnlock)]) {
      try {
        await stop();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, `stopping the test node: ${errors.map(String).join("; ")}`);
  };
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    const left = () => Math.max(1_000, deadline - Date.now());
    const { dir, address } = host;
    plane = await startControlPlane({
      namePrefix: "kube-node-",
      address,
      serverHosts: [KUBERNETES_SERVICE_IP, `kubernetes.default.svc.${CLUSTER_DOMAIN}`],
      apiServerArgs: (pki) => {
        const kubeletClient = pki.issueClient("apiserver-kubelet-client", "kube-apiserver-kubelet-client", ["system:masters"]);
        return [
          "--authorization-mode", "Node,RBAC",
          "--service-cluster-ip-range", SERVICE_CIDR,
          "--kubelet-client-certificate", kubeletClient.cert,
          "--kubelet-client-key", kubeletClient.key,
          "--kubelet-certificate-authority", pki.ca.cert,
          "--kubelet-preferred-address-types", "InternalIP",
          // metrics-server's API
          ...aggregationArgs(pki),
        ];
      },
    });
    const { pki, server } = plane;
    const kube = { kubeconfigPath: plane.kubeconfigPath };
    const kubeconfigFor = (name: string, user: string, groups: string[] = []) => {
      const path = join(dir, `${name}.kubeconfig`);
      writeKubeconfig(path, server, pki.ca.cert, user, pki.issueClient(name, user, groups));
      return path;
    };

    const containerdSocket = join(dir, "containerd.sock");
    mkdirSync(join(dir, "cni", "net.d"), { recursive: true });
    writeFileSync(join(dir, "cni", "net.d", "10-docservice.conflist"), cniConfig(dir));
    writeFileSync(join(dir, "containerd.toml"), containerdConfig(dir));
    const ctr = (...args: string[]) => run("/usr/bin/ctr", ["--address", containerdSocket, "--namespace", "k8s.io", ...args], { timeout: 120_000 });
    const importImage = async (archive: string) => {
      const { stdout } = await ctr("images", "import", archive);
      // "unpacking registry.k8s.io/pause:3.10 (sha256:...)...done"
      return [...stdout.matchAll(/^unpacking (\S+) \(sha256:/gm)].map((match) => match[1]!);
    };

    const controllerManagerKubeconfig = kubeconfigFor("controller-manager", "system:kube-controller-manager");
    const schedulerKubeconfig = kubeconfigFor("scheduler", "system:kube-scheduler");
    const [controllerManagerPort, schedulerPort] = [await freePort(), await freePort()];
    const started = await Promise.allSettled([
      startNodeDaemon("controller-manager", cacheBin("kube-controller-manager"), (logDir) => [
        "--kubeconfig", controllerManagerKubeconfig,
        "--authentication-kubeconfig", controllerManagerKubeconfig,
        "--authorization-kubeconfig", controllerManagerKubeconfig,
        "--controllers", "*",
        // Each controller acts as its own ServiceAccount, as RBAC's default roles expect.
        "--use-service-account-credentials",
        "--service-account-private-key-file", pki.serviceAccount.privateKey,
        "--root-ca-file", pki.ca.cert,
        "--cluster-signing-cert-file", pki.ca.cert,
        "--cluster-signing-key-file", pki.ca.key,
        "--service-cluster-ip-range", SERVICE_CIDR,
        "--leader-elect=false",
        "--bind-address", "127.0.0.1",
        "--secure-port", String(controllerManagerPort),
        "--cert-dir", logDir,
      ], () => healthz(controllerManagerPort), left()),
      startNodeDaemon("scheduler", cacheBin("kube-scheduler"), (logDir) => {
        const config = join(logDir, "scheduler.json");
        writeFileSync(config, schedulerConfig(schedulerKubeconfig));
        return [
          "--config", config,
          "--authentication-kubeconfig", schedulerKubeconfig,
          "--authorization-kubeconfig", schedulerKubeconfig,
          "--bind-address", "127.0.0.1",
          "--secure-port", String(schedulerPort),
          "--cert-dir", logDir,
        ];
      }, () => healthz(schedulerPort), left()),
      startNodeDaemon("containerd", "/usr/bin/containerd", () => ["--config", join(dir, "containerd.toml")], async () => {
        await ctr("version");
        return true;
      }, left()),
    ]);
    for (const result of started) if (result.status === "fulfilled") daemons.push(result.value);
    for (const result of started) if (result.status === "rejected") throw result.reason;
    const [controllerManager, scheduler, runtime] = daemons as [NodeDaemon, NodeDaemon, NodeDaemon];
    await importImage(join(IMAGES(), "pause.tar"));
    const coreDnsImage = (await importImage(join(IMAGES(), "coredns.tar")))[0]!;

    const [kubeletPort, kubeletHealthzPort] = [await freePort(), await freePort()];
    const kubeletKubeconfig = kubeconfigFor("kubelet", `system:node:${NODE_NAME}`, ["system:nodes"]);
    const serving = pki.issueServer("kubelet", [NODE_NAME, address, "127.0.0.1"]);
    writeFileSync(
      join(dir, "kubelet.json"),
      kubeletConfig({ dir, address, port: kubeletPort, healthzPort: kubeletHealthzPort, caFile: pki.ca.cert, serving }),
    );
    const kubelet = await startNodeDaemon("kubelet", cacheBin("kubelet"), () => [
      "--config", join(dir, "kubelet.json"),
      "--kubeconfig", kubeletKubeconfig,
      "--root-dir", join(dir, "kubelet"),
      "--hostname-override", NODE_NAME,
      "--node-ip", address,
      "--v", "1",
    ], async () => (await fetch(`http://127.0.0.1:${kubeletHealthzPort}/healthz`)).ok, left());
    daemons.push(kubelet);
    await waitOrExplain(() => nodeReady(kube), left(), "the node to be Ready", [kubelet, runtime]);

    const [proxyHealthzPort, proxyMetricsPort] = [await freePort(), await freePort()];
    writeFileSync(
      join(dir, "kube-proxy.json"),
      kubeProxyConfig(kubeconfigFor("kube-proxy", "system:kube-proxy"), proxyHealthzPort, proxyMetricsPort),
    );
    daemons.push(
      await startNodeDaemon("kube-proxy", cacheBin("kube-proxy"), () => ["--config", join(dir, "kube-proxy.json"), "--v", "1"],
        async () => (await fetch(`http://127.0.0.1:${proxyHealthzPort}/healthz`)).ok, left()),
    );

    await kubectl(kube, ["apply", "-f", "-"], { input: coreDnsManifests(coreDnsImage) });
    await waitOrExplain(
      async () => (await kubectl(kube, ["get", "serviceaccount", "default", "-n", "default", "-o", "name"])).trim() !== "",
      left(), 'the "default" ServiceAccount', [controllerManager],
    );
    await waitOrExplain(() => coreDnsReady(kube), left(), "CoreDNS to be Ready", [kubelet, runtime], () =>
      kubectl(kube, ["describe", "pods", "-n", "kube-system", "-l", "k8s-app=kube-dns"]));

    const metricsServerPort = await freePort();
    const metricsServerServing = pki.issueServer("metrics-server-serving", [METRICS_SERVER_HOST, address]);
    const metricsServerKubeconfig = kubeconfigFor("metrics-server", "system:metrics-server", ["system:masters"]);
    daemons.push(
      await startNodeDaemon("metrics-server", cacheBin("metrics-server"), (logDir) => [
        "--kubeconfig", metricsServerKubeconfig,
        "--authentication-kubeconfig", metricsServerKubeconfig,
        "--authorization-kubeconfig", metricsServerKubeconfig,
        "--bind-address", address,
        "--secure-port", String(metricsServerPort),
        "--tls-cert-file", metricsServerServing.cert,
        "--tls-private-key-file", metricsServerServing.key,
        "--cert-dir", logDir,
        "--kubelet-preferred-address-types", "InternalIP",
        "--kubelet-use-node-status-port",
        "--kubelet-certificate-authority", pki.ca.cert,
        // the shortest it allows (above the kubelet request timeout): HPAs see a new load within seconds
        "--metric-resolution", "10s",
        "--kubelet-request-timeout", "5s",
      ], () => healthz(metricsServerPort, address, "/livez"), left()),
    );
    await kubectl(kube, ["apply", "-f", "-"], { input: metricsServerManifests(address, metricsServerPort, readFileSync(pki.ca.cert).toString("base64")) });

    const node: KubeNode = {
      kubeconfigPath: plane.kubeconfigPath,
      server,
      nodeName: NODE_NAME,
      pki,
      address,
      importImage,
      tagImage: async (source, target) => void (await ctr("images", "tag", "--force", source, target)),
      freezeContainer: async (containerId, frozen) => void (await ctr("task", frozen ? "pause" : "resume", containerId.replace(/^containerd:\/\//, ""))),
      stop: (beforeUnlock) =>
        (stopping ??= (async () => {
          await stopWorkloads(kube, [controllerManager, scheduler], ctr);
          await stopAll(beforeUnlock);
        })()),
    };
    return node;
  } catch (err) {
    await stopAll().catch((cleanup: unknown) => {
      (err as Error).message += `\n(cleaning up also failed: ${String(cleanup)})`;
    });
    throw err;
  }
}

/**
 * Stops the controllers (nothing may recreate a pod), force-deletes every pod
 * and waits until kubelet has torn them down (CNI DEL removes their addresses
 * and iptables rules), then removes whatever containers are left. Never
 * throws: whatever this leaves, the host cleanup that follows kills, unmounts
 * and removes.
 */
async function stopWorkloads(
  kube: { kubeconfigPath: string },
  controllers: NodeDaemon[],
  ctr: (...args: string[]) => Promise<{ stdout: string }>,
): Promise<void> {
  for (const daemon of controllers) await daemon.stop().catch(() => {});
  try {
    await kubectl(kube, ["delete", "pods", "--all", "--all-namespaces", "--force", "--grace-period=0", "--wait=false"]);
    await waitFor(async () => (await ctr("tasks", "ls", "--quiet")).stdout.trim() === "", {
      timeoutMs: 30_000, intervalMs: 250, what: "kubelet to stop every pod",
    });
  } catch {
    // kube-apiserver or kubelet gone, or too slow
  } finally {
    const containers = (await ctr("containers", "ls", "--quiet").catch(() => ({ stdout: "" }))).stdout.split("\n").filter(Boolean);
    for (const id of containers) {
      await ctr("tasks", "kill", "--signal", "SIGKILL", id).catch(() => {});
      await ctr("tasks", "delete", "--force", id).catch(() => {});
      await ctr("containers", "delete", id).catch(() => {});
    }
  }
}

/** startDaemon with a name under the node's prefix. */
function startNodeDaemon(
  name: string,
  command: string,
  args: (logDir: string) => string[],
  ready: () => Promise<boolean>,
  timeoutMs: number,
): Promise<NodeDaemon> {
  return startDaemon({ name: `kube-node-${name}`, command, args, ready, timeoutMs });
}

/** waitFor, failing with the tails of the daemons' output and whatever `detail` says. */
export async function waitOrExplain(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  suspects: NodeDaemon[],
  detail?: () => Promise<string>,
): Promise<void> {
  try {
    await waitFor(check, { timeoutMs, intervalMs: 250, what });
  } catch (err) {
    const described = detail ? await detail().catch((e: unknown) => String(e)) : "";
    throw new Error([(err as Error).message, described, ...suspects.map((d) => d.tail())].filter(Boolean).join("\n\n"), { cause: err });
  }
}

async function nodeReady(kube: { kubeconfigPath: string }): Promise<boolean> {
  const node = JSON.parse(await kubectl(kube, ["get", "node", NODE_NAME, "-o", "json"])) as {
    status?: { conditions?: { type: string; status: string }[] };
  };
  return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

async function coreDnsReady(kube: { kubeconfigPath: string }): Promise<boolean> {
  const pods = JSON.parse(await kubectl(kube, ["get", "pods", "-n", "kube-system", "-l", "k8s-app=kube-dns", "-o", "json"])) as {
    items: { status?: { conditions?: { type: string; status: string }[] } }[];
  };
  return pods.items.some((pod) => pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
}

/** kube-controller-manager's, kube-scheduler's, metrics-server's and KEDA's adapter's health (the path needs no credentials; only reachability is checked, not the certificate). */
export function healthz(port: number, host = "127.0.0.1", path = "/healthz"): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host, port, path, rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode === 200));
    });
    req.once("timeout", () => req.destroy(new Error(`GET ${path} timed out`)));
    req.once("error", reject);
    req.end();
  });
}

