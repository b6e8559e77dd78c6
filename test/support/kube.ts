import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { promisify } from "node:util";
import { cacheBin, cacheDir } from "./cache.js";
import { startDaemon } from "./daemon.js";
import { openssl } from "./openssl.js";
import { freePort } from "./ports.js";
import { waitFor } from "./wait.js";

const run = promisify(execFile);

export interface KubeApiServer {
  /** A kubeconfig (context "docservice-test") for kubectl and KubeConfig.loadFromFile. */
  kubeconfigPath: string;
  /** "https://127.0.0.1:PORT" */
  server: string;
  /** Stops kube-apiserver, then etcd, and removes their data, the certificates and the kubeconfig. */
  stop(): Promise<void>;
}

/** The user of the kubeconfig: a client certificate in group system:masters (cluster-admin under RBAC). */
export const KUBE_ADMIN_USER = "docservice-test-admin";

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
 * Starts a throwaway control plane without controllers: etcd 3.5 and
 * kube-apiserver (scripts/testenv/kubernetes.sh) on free loopback ports, with
 * their data in temp dirs. Its API works as in a cluster (CRDs, CEL validation,
 * server-side apply, RBAC, leases, TokenRequest, impersonation), but nothing
 * acts on the objects: a Deployment gets no Pods, a namespace is never
 * finalized away. Resolves once /readyz answers and namespace "default" exists.
 *
 * Authorization is RBAC; the kubeconfig's user is {@link KUBE_ADMIN_USER}, a
 * client certificate in system:masters, so a test can impersonate a
 * ServiceAccount (`--as=system:serviceaccount:NS:NAME`) to check least privilege.
 * The ServiceAccount admission plugin is off (no controller makes the "default"
 * ServiceAccount that it requires of a Pod).
 */
export async function startKubeApiServer(): Promise<KubeApiServer> {
  const apiserverBin = cacheBin("kube-apiserver");
  const etcdBin = cacheBin("etcd");
  const [etcdPort, etcdPeerPort, port] = [await freePort(), await freePort(), await freePort()];
  const server = `https://127.0.0.1:${port}`;

  const etcd = await startDaemon({
    name: `etcd-${etcdPort}`,
    command: etcdBin,
    args: (dir) => etcdArgs(dir, etcdPort, etcdPeerPort),
    ready: async () => {
      const res = await fetch(`http://127.0.0.1:${etcdPort}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === "true";
    },
    timeoutMs: 30_000,
  });
  try {
    // The certificates and the kubeconfig go to the API server's temp dir, removed with it.
    let pki: Pki | undefined;
    let kubeconfigPath = "";
    const apiserver = await startDaemon({
      name: `kube-apiserver-${port}`,
      command: apiserverBin,
      args: (dir) => {
        pki = createPki(dir);
        kubeconfigPath = join(dir, "kubeconfig");
        writeFileSync(kubeconfigPath, kubeconfig(server, pki), { mode: 0o600 });
        return apiserverArgs(dir, pki.files, port, etcdPort);
      },
      ready: async () =>
        (await get(port, pki!, "/readyz")) === 200 && (await get(port, pki!, "/api/v1/namespaces/default")) === 200,
      timeoutMs: 90_000,
    });
    return {
      kubeconfigPath,
      server,
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

interface PkiFiles {
  ca: string;
  serverCert: string;
  serverKey: string;
  serviceAccountPublicKey: string;
  serviceAccountPrivateKey: string;
}

function apiserverArgs(data: string, files: PkiFiles, port: number, etcdPort: number): string[] {
  return [
    "--etcd-servers", `http://127.0.0.1:${etcdPort}`,
    "--bind-address", "127.0.0.1",
    "--secure-port", String(port),
    "--advertise-address", "127.0.0.1",
    "--cert-dir", join(data, "certs"), // unused (certificates are given), but not the default /var/run/kubernetes
    "--tls-cert-file", files.serverCert,
    "--tls-private-key-file", files.serverKey,
    "--client-ca-file", files.ca,
    "--authorization-mode", "RBAC",
    "--service-account-issuer", `https://127.0.0.1:${port}`,
    "--service-account-key-file", files.serviceAccountPublicKey,
    "--service-account-signing-key-file", files.serviceAccountPrivateKey,
    // A range is required; nothing routes to it (no kube-proxy, no Pods).
    "--service-cluster-ip-range", "10.0.0.0/24",
    // Endpoints may not hold a loopback address: the "kubernetes" Service gets none.
    "--endpoint-reconciler-type", "none",
    "--disable-admission-plugins", "ServiceAccount",
    // Boolean flags take no separate value.
    "--allow-privileged=true",
    "--profiling=false",
  ];
}

interface Pki {
  files: PkiFiles;
  /** PEM text, for the kubeconfig and the readiness probe. */
  caPem: string;
  adminCertPem: string;
  adminKeyPem: string;
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"];

/** A CA, the server's certificate, the admin's client certificate and the ServiceAccount token signing key. */
function createPki(dir: string): Pki {
  const issue = (name: string, subject: string, extensions: string[], ca = false) => {
    openssl(
      [
        "req", "-x509", ...(ca ? [] : ["-CA", "ca.pem", "-CAkey", "ca.key"]), ...EC_KEY,
        "-keyout", `${name}.key`, "-out", `${name}.pem`, "-subj", subject,
        ...extensions.flatMap((extension) => ["-addext", extension]),
      ],
      dir,
    );
    return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  };
  const ca = issue("ca", "/O=DocService tests/CN=kube test CA", [
    "basicConstraints=critical,CA:TRUE",
    "keyUsage=critical,keyCertSign,cRLSign",
  ], true);
  const leaf = (usage: string) => ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature", `extendedKeyUsage=${usage}`];
  const server = issue("apiserver", "/CN=kube-apiserver", [
    ...leaf("serverAuth"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc",
  ]);
  // Kubernetes reads a client certificate's O as groups and CN as the user name.
  const admin = issue("admin", `/O=system:masters/CN=${KUBE_ADMIN_USER}`, leaf("clientAuth"));

  const { publicKey, privateKey } = generateKeyPairSync("ec", {
    namedCurve: "P-256",
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const serviceAccountPublicKey = join(dir, "sa.pub");
  const serviceAccountPrivateKey = join(dir, "sa.key");
  writeFileSync(serviceAccountPublicKey, publicKey);
  writeFileSync(serviceAccountPrivateKey, privateKey, { mode: 0o600 });

  return {
    files: { ca: ca.cert, serverCert: server.cert, serverKey: server.key, serviceAccountPublicKey, serviceAccountPrivateKey },
    caPem: readFileSync(ca.cert, "utf8"),
    adminCertPem: readFileSync(admin.cert, "utf8"),
    adminKeyPem: readFileSync(admin.key, "utf8"),
  };
}

function kubeconfig(server: string, pki: Pki): string {
  const base64 = (pem: string) => Buffer.from(pem).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: docservice-test",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${base64(pki.caPem)}`,
    "users:",
    `- name: ${KUBE_ADMIN_USER}`,
    "  user:",
    `    client-certificate-data: ${base64(pki.adminCertPem)}`,
    `    client-key-data: ${base64(pki.adminKeyPem)}`,
    "contexts:",
    "- name: docservice-test",
    "  context:",
    "    cluster: docservice-test",
    `    user: ${KUBE_ADMIN_USER}`,
    "    namespace: default",
    "current-context: docservice-test",
    "",
  ].join("\n");
}

/** GET path as the admin; resolves the HTTP status. */
function get(port: number, pki: Pki, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem, timeout: 2_000 },
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
