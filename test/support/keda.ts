/**
 * KEDA next to a test cluster: its operator and its metrics adapter
 * (scripts/testenv/kubernetes.sh) as host processes, the way
 * test/support/kube-node.ts runs metrics-server. The adapter serves the
 * cluster's external metrics API (external.metrics.k8s.io, what the HPAs KEDA
 * makes read) behind an APIService whose EndpointSlice names the host's address.
 *
 * Works with the test node and with the control plane alone
 * (startKubeApiServer({ aggregatedApis: true })): the operator makes HPAs and
 * reads triggers from the host, so a trigger's URL may be on loopback; without
 * a node nothing runs the pods it scales. Beside the node, `clusterDns` makes
 * the operator resolve Service names as a pod in KEDA's namespace would.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheBin } from "./cache.js";
import { startDaemon, type Daemon } from "./daemon.js";
import { kedaCrdsFile, kubectl, waitForCrds } from "./kube.js";
import { CLUSTER_DOMAIN, hostApiServiceManifests } from "./kube-node-config.js";
import { healthz, waitOrExplain } from "./kube-node.js";
import { writeKubeconfig, type CertFiles, type KubePki } from "./kube-pki.js";
import { freePort } from "./ports.js";

export interface KedaCluster {
  /** Its admin's kubeconfig: applies KEDA's CRDs, namespace and APIService. */
  kubeconfigPath: string;
  /** "https://HOST:PORT", for KEDA's own kubeconfig. */
  server: string;
  /** The cluster's CA, which the API server trusts for clients: issues KEDA's certificates. */
  pki: KubePki;
  /**
   * An IPv4 address of this host other than loopback (endpoints may not hold
   * one), where the adapter listens and the API server reaches it.
   */
  address: string;
}

export interface KedaOptions {
  /**
   * Prefix of the processes' names and temp dirs: "kube-node-" on the test
   * node, so that the cleanup after a crashed node kills and removes them too.
   * Default "".
   */
  namePrefix?: string;
  /**
   * The cluster DNS Service's address (the test node's CLUSTER_DNS_IP): the
   * operator resolves names as a pod in KEDA's namespace would, so that a
   * trigger's Service name (a Kafka scaler's brokers) is found, or not, as in
   * a cluster. Its /etc/resolv.conf is replaced in a mount namespace of its
   * own. Without it, the host's resolver.
   */
  clusterDns?: string;
}

export interface Keda {
  /** Where KEDA's Service and EndpointSlice are: "keda". */
  namespace: string;
  /** The end of the operator's and the adapter's output, for a failure's message. */
  tail(): string;
  /**
   * Deletes the APIService (with its Service and EndpointSlice), stops the adapter
   * and the operator, removes their files and certificates. Idempotent. Call it
   * before the cluster's stop.
   */
  stop(): Promise<void>;
}

const NAMESPACE = "keda";
/** The Service name of KEDA's chart, which the adapter's certificate holds. */
const ADAPTER_SERVICE = "keda-metrics-apiserver";
const GROUP = "external.metrics.k8s.io";
const API_SERVICE = `v1beta1.${GROUP}`;
const START_TIMEOUT_MS = 120_000;

/**
 * Applies KEDA's CRDs and namespace, starts the operator, then the adapter,
 * registers the adapter as the cluster's external metrics API and resolves
 * once the APIService is Available. The cluster's API server must be set up
 * for aggregated APIs (aggregationArgs in kube-control-plane.ts), and must not
 * serve external metrics already: one APIService per group and version.
 */
export async function startKeda(cluster: KedaCluster, options: KedaOptions = {}): Promise<Keda> {
  const kube = { kubeconfigPath: cluster.kubeconfigPath };
  const existing = await kubectl(kube, ["get", "apiservice", API_SERVICE, "--ignore-not-found", "-o", "jsonpath={.spec.service.namespace}/{.spec.service.name}"]);
  if (existing !== "") {
    throw new Error(`the cluster serves ${GROUP} already (APIService ${API_SERVICE}, Service ${existing}); only one server can`);
  }
  const prefix = options.namePrefix ?? "";
  const deadline = Date.now() + START_TIMEOUT_MS;
  const left = () => Math.max(1_000, deadline - Date.now());

  // In start order; stopped in reverse.
  const daemons: Daemon[] = [];
  const issued: CertFiles[] = [];
  let registered = false;
  let stopping: Promise<void> | undefined;
  const stopAll = async () => {
    const errors: unknown[] = [];
    const unregister = async () => {
      if (registered) {
        await kubectl(kube, ["delete", "-n", NAMESPACE, `apiservice/${API_SERVICE}`, `service/${ADAPTER_SERVICE}`, `endpointslice/${ADAPTER_SERVICE}`, "--ignore-not-found"]);
      }
    };
    const removeCerts = () => {
      for (const files of issued) for (const file of [files.cert, files.key]) rmSync(file, { force: true });
    };
    for (const step of [unregister, ...[...daemons].reverse().map((d) => () => d.stop()), removeCerts]) {
      try {
        await step();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, `stopping KEDA: ${errors.map(String).join("; ")}`);
  };

  try {
    await kubectl(kube, ["apply", "--server-side", "-f", kedaCrdsFile()]);
    await kubectl(kube, ["apply", "-f", "-"], { input: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }) });
    // The operator watches every kind of them: all Established before it starts.
    const crds = [...readFileSync(kedaCrdsFile(), "utf8").matchAll(/^ {2}name: (\S+)$/gm)].map((match) => match[1]!);
    await waitForCrds(kube, crds, left());

    const issue = (files: CertFiles) => {
      issued.push(files);
      return files;
    };
    const { pki } = cluster;
    // KEDA reads whatever its triggers name and scales any workload; its own RBAC is not under test.
    const client = issue(pki.issueClient("keda", "keda", ["system:masters"]));
    // The adapter asks the operator for metric values over mutual TLS.
    const grpcServer = issue(pki.issueServer("keda-operator-grpc", ["127.0.0.1"]));
    const grpcClient = issue(pki.issueClient("keda-adapter-grpc", "keda-adapter"));
    const serving = issue(pki.issueServer("keda-adapter-serving", [`${ADAPTER_SERVICE}.${NAMESPACE}.svc`, cluster.address]));
    /**
     * Either process, with its kubeconfig and its gRPC certificates as --cert-dir
     * wants them (ca.crt, tls.crt, tls.key), and the cluster's resolver if `dns`.
     */
    const start = (name: string, grpc: CertFiles, args: (kubeconfig: string, certs: string) => string[], ready: () => Promise<boolean>, dns?: string) =>
      startDaemon({
        name: `${prefix}${name}`,
        command: dns ? "unshare" : cacheBin(name),
        // Every namespace; the cluster-wide objects (ClusterTriggerAuthentication secrets) in KEDA's.
        env: { WATCH_NAMESPACE: "", POD_NAMESPACE: NAMESPACE, KEDA_CLUSTER_OBJECT_NAMESPACE: NAMESPACE },
        args: (dir) => {
          const kubeconfig = join(dir, "kubeconfig");
          writeKubeconfig(kubeconfig, cluster.server, pki.ca.cert, "keda", client);
          const certs = join(dir, "certs");
          mkdirSync(certs);
          copyFileSync(pki.ca.cert, join(certs, "ca.crt"));
          copyFileSync(grpc.cert, join(certs, "tls.crt"));
          copyFileSync(grpc.key, join(certs, "tls.key"));
          if (!dns) return args(kubeconfig, certs);
          const resolvConf = join(dir, "resolv.conf");
          writeFileSync(resolvConf, podResolvConf(dns));
          // a private mount namespace, where the bind mount is this process's alone; exec keeps its process id
          return ["--mount", "--propagation", "private", "--", "sh", "-c", 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"', "sh", resolvConf, cacheBin(name), ...args(kubeconfig, certs)];
        },
        ready,
        timeoutMs: left(),
      });
    const [grpcPort, probePort, adapterPort] = [await freePort(), await freePort(), await freePort()];

    const operator = await start("keda-operator", grpcServer, (kubeconfig, certs) => [
      "--kubeconfig", kubeconfig,
      "--cert-dir", certs,
      "--metrics-service-bind-address", `127.0.0.1:${grpcPort}`,
      "--health-probe-bind-address", `127.0.0.1:${probePort}`,
      "--metrics-bind-address", "0", // off
    ], async () => (await fetch(`http://127.0.0.1:${probePort}/readyz`)).ok, options.clusterDns);
    daemons.push(operator);
    // It exits 0 when it cannot start: readiness is its /readyz, then the APIService's.
    const adapter = await start("keda-adapter", grpcClient, (kubeconfig, certs) => [
      "--kubeconfig", kubeconfig,
      "--lister-kubeconfig", kubeconfig,
      "--authentication-kubeconfig", kubeconfig,
      "--authorization-kubeconfig", kubeconfig,
      "--bind-address", cluster.address,
      "--secure-port", String(adapterPort),
      "--tls-cert-file", serving.cert,
      "--tls-private-key-file", serving.key,
      "--cert-dir", certs,
      "--metrics-service-address", `127.0.0.1:${grpcPort}`,
      // its plain /metrics takes a port but no address: one the kernel picks
      "--port", "0",
    ], () => healthz(adapterPort, cluster.address, "/readyz"));
    daemons.push(adapter);

    registered = true;
    await kubectl(kube, ["apply", "-f", "-"], {
      input: hostApiServiceManifests({
        name: ADAPTER_SERVICE, namespace: NAMESPACE, labels: { "app.kubernetes.io/name": ADAPTER_SERVICE },
        group: GROUP, version: "v1beta1", address: cluster.address, port: adapterPort,
        caBundle: readFileSync(pki.ca.cert).toString("base64"),
      }),
    });
    await waitOrExplain(() => apiServiceAvailable(kube), left(), `the APIService ${API_SERVICE} to be Available`, [adapter, operator], () =>
      kubectl(kube, ["get", "apiservice", API_SERVICE, "-o", "jsonpath={.status.conditions}"]));

    return { namespace: NAMESPACE, tail: () => daemons.map((daemon) => daemon.tail()).join("\n\n"), stop: () => (stopping ??= stopAll()) };
  } catch (err) {
    await stopAll().catch((cleanup: unknown) => {
      (err as Error).message += `\n(cleaning up also failed: ${String(cleanup)})`;
    });
    throw err;
  }
}

/** What kubelet writes for a pod in KEDA's namespace (dnsPolicy ClusterFirst). */
function podResolvConf(nameserver: string): string {
  return [`nameserver ${nameserver}`, `search ${NAMESPACE}.svc.${CLUSTER_DOMAIN} svc.${CLUSTER_DOMAIN} ${CLUSTER_DOMAIN}`, "options ndots:5", ""].join("\n");
}

async function apiServiceAvailable(kube: { kubeconfigPath: string }): Promise<boolean> {
  const apiService = JSON.parse(await kubectl(kube, ["get", "apiservice", API_SERVICE, "-o", "json"])) as {
    status?: { conditions?: { type: string; status: string }[] };
  };
  return apiService.status?.conditions?.some((c) => c.type === "Available" && c.status === "True") ?? false;
}
