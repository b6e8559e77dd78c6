import { readFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { cacheBin } from "./cache.js";
import { startDaemon } from "./daemon.js";
import { createKubePki, writeKubeconfig, type CertFiles, type KubePki } from "./kube-pki.js";
import { freePort } from "./ports.js";

/** The user of the kubeconfig: a client certificate in group system:masters (cluster-admin under RBAC). */
export const KUBE_ADMIN_USER = "docservice-test-admin";

export interface ControlPlaneOptions {
  /** Prefix of the daemons' names (and so of their temp dirs): `${prefix}etcd-PORT`, `${prefix}kube-apiserver-PORT`. */
  namePrefix: string;
  /** The address kube-apiserver listens on, advertises, and is reached at. */
  address: string;
  /** Names and addresses in the API server's certificate besides `address`, localhost and kubernetes.default.svc. */
  serverHosts: string[];
  /** kube-apiserver flags beyond the ones every control plane has; may issue more certificates. */
  apiServerArgs(pki: KubePki): string[];
}

export interface ControlPlane {
  /** "https://ADDRESS:PORT" */
  server: string;
  kubeconfigPath: string;
  /** The cluster's CA and certificates, in a directory that lives until stop(). */
  pki: KubePki;
  /** kube-apiserver, then etcd; removes their data, the certificates and the kubeconfig. */
  stop(): Promise<void>;
}

/**
 * etcd 3.5 and kube-apiserver (scripts/testenv/kubernetes.sh) on free ports,
 * their data in temp dirs. Resolves once /readyz answers and namespace
 * "default" exists. Authentication is by client certificates from one CA
 * (the kubeconfig's user is {@link KUBE_ADMIN_USER}) and ServiceAccount tokens.
 */
export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const [etcdPort, etcdPeerPort, port] = [await freePort(), await freePort(), await freePort()];
  const server = `https://${options.address}:${port}`;

  const etcd = await startDaemon({
    name: `${options.namePrefix}etcd-${etcdPort}`,
    command: cacheBin("etcd"),
    args: (dir) => etcdArgs(dir, etcdPort, etcdPeerPort),
    ready: async () => {
      const res = await fetch(`http://127.0.0.1:${etcdPort}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === "true";
    },
    timeoutMs: 90_000,
  });
  try {
    // The certificates and the kubeconfig go to the API server's temp dir, removed with it.
    let pki: KubePki | undefined;
    let admin: CertFiles | undefined;
    let kubeconfigPath = "";
    const apiserver = await startDaemon({
      name: `${options.namePrefix}kube-apiserver-${port}`,
      command: cacheBin("kube-apiserver"),
      args: (dir) => {
        pki = createKubePki(dir);
        admin = pki.issueClient("admin", KUBE_ADMIN_USER, ["system:masters"]);
        kubeconfigPath = join(dir, "kubeconfig");
        writeKubeconfig(kubeconfigPath, server, pki.ca.cert, KUBE_ADMIN_USER, admin);
        const hosts = [
          options.address, "localhost", "127.0.0.1", ...options.serverHosts,
          "kubernetes", "kubernetes.default", "kubernetes.default.svc",
        ];
        const serving = pki.issueServer("apiserver", [...new Set(hosts)]);
        return [
          "--etcd-servers", `http://127.0.0.1:${etcdPort}`,
          "--bind-address", options.address,
          "--secure-port", String(port),
          "--advertise-address", options.address,
          "--cert-dir", join(dir, "certs"), // unused (certificates are given), but not the default /var/run/kubernetes
          "--tls-cert-file", serving.cert,
          "--tls-private-key-file", serving.key,
          "--client-ca-file", pki.ca.cert,
          "--service-account-issuer", server,
          "--service-account-key-file", pki.serviceAccount.publicKey,
          "--service-account-signing-key-file", pki.serviceAccount.privateKey,
          // Boolean flags take no separate value.
          "--allow-privileged=true",
          "--profiling=false",
          ...options.apiServerArgs(pki),
        ];
      },
      ready: async () =>
        (await get(options.address, port, pki!.ca, admin!, "/readyz")) === 200 &&
        (await get(options.address, port, pki!.ca, admin!, "/api/v1/namespaces/default")) === 200,
      timeoutMs: 90_000,
    });
    return {
      server,
      kubeconfigPath,
      pki: pki!,
      async stop() {
        try {
          await apiserver.stop();
        } finally {
          await etcd.stop();
        }
      },
    };
  } catch (err) {
    await etcd.stop();
    throw err;
  }
}

/**
 * kube-apiserver flags for aggregated APIs served on the host (metrics-server,
 * KEDA's adapter): the client certificate it presents when it forwards a
 * request, the CA and headers the server behind it trusts it by, and routing
 * to the Service's endpoints (the host runs no kube-proxy for the API server).
 */
export function aggregationArgs(pki: KubePki): string[] {
  const frontProxy = pki.issueClient("front-proxy-client", "front-proxy-client");
  return [
    "--requestheader-client-ca-file", pki.ca.cert,
    "--requestheader-allowed-names", "front-proxy-client",
    "--requestheader-username-headers", "X-Remote-User",
    "--requestheader-group-headers", "X-Remote-Group",
    "--requestheader-extra-headers-prefix", "X-Remote-Extra-",
    "--proxy-client-cert-file", frontProxy.cert,
    "--proxy-client-key-file", frontProxy.key,
    "--enable-aggregator-routing=true",
  ];
}

function etcdArgs(data: string, port: number, peerPort: number): string[] {
  const client = `http://127.0.0.1:${port}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    "--name", "default",
    "--data-dir", join(data, "etcd"),
    "--listen-client-urls", client,
    "--advertise-client-urls", client,
    // Set, or etcd listens on the fixed default peer port 2380 and two runs collide.
    "--listen-peer-urls", peer,
    "--initial-advertise-peer-urls", peer,
    "--initial-cluster", `default=${peer}`,
    // Test data: no fsync on every write (much faster on a shared disk).
    "--unsafe-no-fsync",
    "--log-level", "warn",
  ];
}

/** GET path with a client certificate; resolves the HTTP status. */
function get(host: string, port: number, ca: CertFiles, client: CertFiles, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host, port, path, timeout: 2_000,
        ca: readFileSync(ca.cert), cert: readFileSync(client.cert), key: readFileSync(client.key),
      },
      (res) => {
        res.resume();
        res.once("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.once("timeout", () => req.destroy(new Error(`GET ${path} timed out`)));
    req.once("error", reject);
    req.end();
  });
}
