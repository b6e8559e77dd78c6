import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { cacheBin, cacheDir } from "./cache.js";
import { KUBE_ADMIN_USER, aggregationArgs, startControlPlane } from "./kube-control-plane.js";
import type { KubePki } from "./kube-pki.js";
import { waitFor } from "./wait.js";

const run = promisify(execFile);

export interface KubeApiServer {
  /** A kubeconfig (context "docservice-test") for kubectl and KubeConfig.loadFromFile. */
  kubeconfigPath: string;
  /** "https://127.0.0.1:PORT" */
  server: string;
  /** The cluster's CA, which signs its certificates (see kube-pki.ts); until stop(). */
  pki: KubePki;
  /** Stops kube-apiserver, then etcd, and removes their data, the certificates and the kubeconfig. */
  stop(): Promise<void>;
}

export { KUBE_ADMIN_USER };

/**
 * KEDA's CRDs as its release ships them (scripts/testenv/kubernetes.sh). Apply
 * them with `kubectl apply --server-side`: they are too big for client-side
 * apply's last-applied annotation.
 */
export function kedaCrdsFile(): string {
  const path = join(cacheDir(), "keda-crds", "keda-crds.yaml");
  if (!existsSync(path)) throw new Error(`${path} not found: run scripts/testenv/setup.sh`);
  return path;
}

/**
 * The Prometheus Operator's PodMonitor and PrometheusRule CRDs
 * (scripts/testenv/kubernetes.sh), for the chart's monitoring objects. Apply
 * them with `kubectl apply --server-side`, like KEDA's.
 */
export function prometheusOperatorCrdsFile(): string {
  const path = join(cacheDir(), "prometheus-operator-crds", "prometheus-operator-crds.yaml");
  if (!existsSync(path)) throw new Error(`${path} not found: run scripts/testenv/setup.sh`);
  return path;
}

/**
 * Starts a throwaway control plane without controllers: etcd 3.5 and
 * kube-apiserver (scripts/testenv/kubernetes.sh) on free loopback ports, with
 * their data in temp dirs. Its API works as in a cluster (CRDs, CEL validation,
 * server-side apply, RBAC, leases, TokenRequest, impersonation), but nothing
 * acts on the objects: a Deployment gets no Pods, a namespace is never
 * finalized away. Resolves once /readyz answers and namespace "default" exists.
 * (test/support/kube-node.ts starts a whole node, with Pods that run.)
 *
 * Authorization is RBAC; the kubeconfig's user is {@link KUBE_ADMIN_USER}, a
 * client certificate in system:masters, so a test can impersonate a
 * ServiceAccount (`--as=system:serviceaccount:NS:NAME`) to check least privilege.
 * The ServiceAccount admission plugin is off (no controller makes the "default"
 * ServiceAccount that it requires of a Pod).
 *
 * `aggregatedApis`: set up for APIServices served on the host, as the test
 * node's API server is (test/support/keda.ts).
 */
export async function startKubeApiServer(options: { aggregatedApis?: boolean } = {}): Promise<KubeApiServer> {
  const { kubeconfigPath, server, pki, stop } = await startControlPlane({
    namePrefix: "",
    address: "127.0.0.1",
    serverHosts: [],
    apiServerArgs: (pki) => [
      "--authorization-mode", "RBAC",
      // A range is required; nothing routes to it (no kube-proxy, no Pods).
      "--service-cluster-ip-range", "10.0.0.0/24",
      // Endpoints may not hold a loopback address: the "kubernetes" Service gets none.
      "--endpoint-reconciler-type", "none",
      "--disable-admission-plugins", "ServiceAccount",
      ...(options.aggregatedApis ? aggregationArgs(pki) : []),
    ],
  });
  return { kubeconfigPath, server, pki, stop };
}

/** Runs kubectl with the server's kubeconfig; rejects with its stderr on a non-zero exit. */
export async function kubectl(
  kube: Pick<KubeApiServer, "kubeconfigPath">,
  args: string[],
  options: { input?: string } = {},
): Promise<string> {
  const command = cacheBin("kubectl");
  const child = run(command, ["--kubeconfig", kube.kubeconfigPath, ...args], { maxBuffer: 64 * 1024 * 1024 });
  if (options.input !== undefined) child.child.stdin!.end(options.input);
  try {
    return (await child).stdout;
  } catch (err) {
    const { stderr } = err as { stderr?: string };
    throw new Error(`kubectl ${args.join(" ")} failed: ${stderr?.trim() || (err as Error).message}`, { cause: err });
  }
}

/**
 * Waits until each CustomResourceDefinition (e.g. "widgets.example.dev") is
 * Established, so that resources of its kind can be created. (`kubectl wait`
 * fails instead of waiting when it reads a CRD before its status is first written.)
 */
export async function waitForCrds(kube: Pick<KubeApiServer, "kubeconfigPath">, names: string[], timeoutMs = 30_000): Promise<void> {
  interface Crd {
    metadata: { name: string };
    status?: { conditions?: { type: string; status: string }[] };
  }
  await waitFor(
    async () => {
      // One name gets the object, several a List.
      const got = JSON.parse(await kubectl(kube, ["get", "crd", ...names, "-o", "json"])) as Crd | { items: Crd[] };
      const crds = "items" in got ? got.items : [got];
      const established = (crd: Crd) => crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
      return names.every((name) => crds.some((crd) => crd.metadata.name === name && established(crd)));
    },
    { timeoutMs, intervalMs: 100, what: `CRDs ${names.join(", ")} to be Established` },
  );
}
