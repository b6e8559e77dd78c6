/**
 * A DocService on the test node (test/support/kube-node.ts) as the operator
 * deploys it from the chart, with Kafka and Redis in the cluster: one pod per
 * component, each limited to one core (the unit the sizing profile's CPU
 * figures are in) and to the memory below, loaded through its Service (the
 * gateway's ClusterIP for HTTP; a backend's gRPC Service, with mutual TLS as
 * the gateway's certificate, for keys and the telemetry API), its CPU and
 * memory read from its pod's cgroup.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ComponentName } from "../operator/crd.js";
import { cacheBin } from "../test/support/cache.js";
import { call } from "../test/support/key-flow.js";
import { kubectl } from "../test/support/kube.js";
import { startKubeNode, type KubeNode } from "../test/support/kube-node.js";
import { CGROUP_ROOT } from "../test/support/kube-node-config.js";
import { PLATFORM_VERSION, applyKafkaAndRedis, buildPlatformImages, codeFromOutbox, importImages, installOperator } from "../test/support/kube-platform.js";
import { postJson } from "../test/support/sign-requests.js";
import { today, usage } from "../test/support/usage-reports.js";
import { waitFor } from "../test/support/wait.js";
import { CLUSTER_SIZINGS } from "./scenarios.js";
import { writeFixtures, type Target } from "./target.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const NAMESPACE = "docservice-sizing";
const INSTANCE = "docservice";

/** Each component's Deployment (`<instance>-<name>`) and its pod's memory (request = limit). */
const PODS: Record<ComponentName, { name: string; memory: string }> = {
  gateway: { name: "gateway", memory: "1Gi" },
  keys: { name: "keys", memory: "512Mi" },
  signing: { name: "signing", memory: "1Gi" },
  conversion: { name: "conversion", memory: "2Gi" },
  telemetryApi: { name: "telemetry-api", memory: "512Mi" },
  telemetryAggregator: { name: "telemetry-aggregator", memory: "512Mi" },
};
const COMPONENTS = Object.keys(PODS) as ComponentName[];
/** A CPU request small enough for every pod to fit on the node, and a limit of one core. */
const CPU_REQUEST = "100m";
const CPU_LIMIT = "1";

/** How long the aggregator may take, after a step, to have applied the step's events. */
const CATCH_UP_MS = 5000;

/** A pod's cgroup directory in one v1 hierarchy (the node's kubelet uses cgroupfs under CGROUP_ROOT). */
function podCgroup(hierarchy: "cpuacct" | "memory", podUid: string): string {
  const kubepods = join("/sys/fs/cgroup", hierarchy, CGROUP_ROOT, "kubepods");
  const name = `pod${podUid}`;
  for (const qos of ["", "burstable", "besteffort"]) {
    const parent = join(kubepods, qos);
    try {
      if (readdirSync(parent).includes(name)) return join(parent, name);
    } catch {
      // that QoS class has no directory yet
    }
  }
  throw new Error(`no ${hierarchy} cgroup for pod ${podUid} under ${kubepods}`);
}

/** The working set, as the kubelet counts it: usage less inactive file pages. */
function workingSetMiB(memoryCgroup: string): number {
  const usage = Number(readFileSync(join(memoryCgroup, "memory.usage_in_bytes"), "utf8"));
  const inactive = Number(/^total_inactive_file (\d+)$/m.exec(readFileSync(join(memoryCgroup, "memory.stat"), "utf8"))?.[1] ?? 0);
  return Math.round((usage - inactive) / 2 ** 20);
}

export async function startClusterTarget(fixtureDir: string): Promise<Target> {
  const archives = await buildPlatformImages();
  const node = await startKubeNode();
  try {
    return await deploy(node, archives, fixtureDir);
  } catch (error) {
    await node.stop();
    throw error;
  }
}

async function deploy(node: KubeNode, archives: string[], fixtureDir: string): Promise<Target> {
  const k = (args: string[], input?: string) => kubectl(node, args, input === undefined ? {} : { input });
  const get = async (kind: string, name: string): Promise<any> => JSON.parse(await k(["get", kind, name, "-n", NAMESPACE, "-o", "json"]));
  await importImages(node, archives);
  await k(["create", "namespace", NAMESPACE]);
  const values = join(fixtureDir, "values.yaml");
  writeFileSync(values, "image:\n  pullPolicy: Never\nreplicas: 1\n");
  await installOperator(node, NAMESPACE, values);
  await applyKafkaAndRedis(node, NAMESPACE);
  const adminToken = randomBytes(24).toString("base64url");
  await k(["create", "secret", "generic", `${INSTANCE}-admin`, "-n", NAMESPACE, `--from-literal=token=${adminToken}`]);
  const components = Object.fromEntries(
    COMPONENTS.map((component) => [
      component,
      { replicas: 1, resources: { requests: { cpu: CPU_REQUEST, memory: PODS[component].memory }, limits: { cpu: CPU_LIMIT, memory: PODS[component].memory } } },
    ]),
  );
  const spec = {
    version: PLATFORM_VERSION,
    kafka: { bootstrapServers: ["kafka:9092"], partitions: 3, replicationFactor: 1 },
    redis: { address: "redis:6379" },
    adminTokenSecret: { name: `${INSTANCE}-admin`, key: "token" },
    components,
  };
  await k(["apply", "-n", NAMESPACE, "-f", "-"], JSON.stringify({ apiVersion: "docservice.dev/v1alpha1", kind: "DocService", metadata: { name: INSTANCE }, spec }));
  await waitFor(async () => (await get("docservice", INSTANCE)).status?.conditions?.find((c: any) => c.type === "Ready")?.status === "True", {
    what: "the DocService Ready",
    timeoutMs: 5 * 60_000,
    intervalMs: 2000,
  });

  const clusterIp = async (component: ComponentName) => (await get("service", `${INSTANCE}-${PODS[component].name}`)).spec.clusterIP as string;
  const base = `http://${await clusterIp("gateway")}`;
  await waitFor(async () => (await fetch(`${base}/v1/health`)).status === 200, { what: "every backend healthy through the gateway", timeoutMs: 120_000, intervalMs: 1000 });
  const email = "sizing@example.test";
  const registered = await call(base, `/v1/auth/register?email=${encodeURIComponent(email)}`);
  if (registered.status !== 200) throw new Error(`register answered ${registered.status}: ${JSON.stringify(registered.body)}`);
  const apiKey = (await call(base, `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${await codeFromOutbox(node, NAMESPACE, email, INSTANCE)}`)).body.apiKey as string;
  // the aggregator's events under a key of their own, so that what it applied is counted apart from the other steps' reports
  const created = await postJson(base, "/v1/admin/license-keys", { customer: "sizing" }, adminToken);
  if (created.status !== 201) throw new Error(`creating a license key answered ${created.status}: ${JSON.stringify(created.body)}`);
  const aggregatorKey = created.body.licenseKey as string;

  // a backend's gRPC is reached as the gateway reaches it: by a name its certificate carries, with the gateway's certificate
  const tls = (await get("secret", `${INSTANCE}-gateway-tls`)).data as Record<string, string>;
  const tlsFiles = Object.fromEntries(
    (["ca.crt", "tls.crt", "tls.key"] as const).map((name) => {
      const path = join(fixtureDir, `gateway-${name}`);
      writeFileSync(path, Buffer.from(tls[name]!, "base64"), { mode: 0o600 });
      return [name, path];
    }),
  );
  const grpcEnv = async (component: ComponentName) => {
    const name = `${INSTANCE}-${PODS[component].name}.${NAMESPACE}.svc`;
    return { GRPC_ADDR: `${name}:50051`, HOSTS: `${name}=${await clusterIp(component)}`, GRPC_TLS_CA_FILE: tlsFiles["ca.crt"]!, GRPC_TLS_CERT_FILE: tlsFiles["tls.crt"]!, GRPC_TLS_KEY_FILE: tlsFiles["tls.key"]! };
  };
  const grpc: Partial<Record<ComponentName, Record<string, string>>> = { keys: await grpcEnv("keys"), telemetryApi: await grpcEnv("telemetryApi") };

  const cgroups = new Map<ComponentName, { cpuacct: string; memory: string }>();
  for (const component of COMPONENTS) {
    const pods = JSON.parse(await k(["get", "pods", "-n", NAMESPACE, "-l", `app.kubernetes.io/instance=${INSTANCE},app.kubernetes.io/component=${PODS[component].name}`, "-o", "json"])).items;
    if (pods.length !== 1) throw new Error(`${component}: expected one pod, found ${pods.length}`);
    const uid = pods[0].metadata.uid as string;
    cgroups.set(component, { cpuacct: podCgroup("cpuacct", uid), memory: podCgroup("memory", uid) });
  }
  const cgroupOf = (component: ComponentName | undefined) => {
    const found = component && cgroups.get(component);
    if (!found) throw new Error(`no pod measured for ${component ?? "every component"}`);
    return found;
  };

  const fixtures = await writeFixtures(fixtureDir);
  const common = { BASE_URL: base, API_KEY: apiKey, PROTO_DIR: join(ROOT, "proto"), ...fixtures.env };
  let applied = 0;
  const opens = async () => (await usage(base, aggregatorKey, today(), today(), adminToken)).body.opens as number;
  console.log(`DocService ${PLATFORM_VERSION} ready on the node: gateway ${base}, one pod per component`);
  return {
    k6: cacheBin("k6"),
    env: (component) => ({ ...common, ...(component ? grpc[component] : {}), ...(component === "telemetryAggregator" ? { LICENSE_KEY: aggregatorKey } : {}) }),
    cpuSeconds: (component) => Number(readFileSync(join(cgroupOf(component).cpuacct, "cpuacct.usage"), "utf8")) / 1e9,
    memoryMiB: (component) => workingSetMiB(cgroupOf(component).memory),
    async fellBehind(component, eventsSent) {
      if (component !== "telemetryAggregator") return undefined;
      const wanted = applied + Math.floor(0.99 * eventsSent);
      const deadline = Date.now() + CATCH_UP_MS;
      let now = await opens();
      while (now < wanted && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        now = await opens();
      }
      const behind = now < wanted ? `${now - applied} of ${eventsSent} events applied ${CATCH_UP_MS / 1000} s after the step` : undefined;
      // what is still in Kafka belongs to this step: wait until the count stops moving, so the next step starts from nothing pending
      for (let previous = -1; previous !== now; ) {
        previous = now;
        await new Promise((resolve) => setTimeout(resolve, 1000));
        now = await opens();
      }
      applied = now;
      return behind;
    },
    sharesMachine: false,
    command: "npm run loadtest:size -- --cluster",
    sizings: CLUSTER_SIZINGS,
    description:
      `one pod of each component on a real single-node Kubernetes cluster on this machine (kubelet, containerd, kube-proxy), deployed by the operator ` +
      `from the chart (images built by npm run image, LOG_LEVEL=info as the operator sets it), Kafka and Redis in the cluster; each pod limited to ` +
      `${CPU_LIMIT} core (request ${CPU_REQUEST}) and its memory (${COMPONENTS.map((c) => `${c} ${PODS[c].memory}`).join(", ")}); ` +
      `loaded through its Service: HTTP through the gateway's ClusterIP, keys and telemetryApi over gRPC with mutual TLS as the gateway; ` +
      `CPU and memory (working set at the end of the step) from the pod's cgroup; fixtures: a 1-page pdf-lib PDF, ${fixtures.docxFixture}`,
    stop: () => node.stop(),
  };
}
