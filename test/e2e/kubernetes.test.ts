/**
 * The first way people use DocService, end to end on a real single-node
 * cluster (kubelet, containerd, kube-proxy, CoreDNS: test/support/kube-node.ts):
 * the images built by `npm run image`, the chart installed with helm, a
 * DocService applied with kubectl, and the platform used through its Service.
 *
 * Skipped, loudly, only on a machine that cannot run containers.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cacheBin } from "../support/cache.js";
import { quantityValue } from "../../operator/quantity.js";
import { corpusFile } from "../support/corpus.js";
import { call } from "../support/key-flow.js";
import { startKeda, type Keda } from "../support/keda.js";
import { CLUSTER_DNS_IP, canRunContainers, startKubeNode, type KubeNode } from "../support/kube-node.js";
import { PLATFORM_VERSION, applyKafkaAndRedis, buildPlatformImages, codeFromOutbox as codeFromOutboxOf, helm, importImages, installOperator } from "../support/kube-platform.js";
import { kubectl, prometheusOperatorCrdsFile, waitForCrds } from "../support/kube.js";
import { monitoringQueries } from "../support/monitoring-queries.js";
import { pdfsig } from "../support/pdf-validators.js";
import { collect, report, today, usage } from "../support/usage-reports.js";
import { podMonitorScrapeConfigs, startPrometheus, withShortPending, writePodMonitorTargets, type Pod, type PodMonitor } from "../support/prometheus.js";
import { postJson, signBody } from "../support/sign-requests.js";
import { waitFor } from "../support/wait.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const NAMESPACE = "docservice-e2e";
const VERSION = PLATFORM_VERSION;

const containers = canRunContainers();
if (!containers.ok) {
  console.error(`\n${"!".repeat(78)}\n!! SKIPPED: the Kubernetes end-to-end test. This machine cannot run containers:\n!! ${containers.reason}\n${"!".repeat(78)}\n`);
}

describe("Kubernetes end to end: helm install, kubectl apply, the platform through its Service", { skip: containers.ok ? false : containers.reason, timeout: 45 * 60_000 }, () => {
  let node: KubeNode;
  let dir: string;
  const forwards: ChildProcess[] = [];
  /** The image names imported into the node. */
  const images: string[] = [];
  /** What the production-shape test leaves for the tests after it. */
  let production: { licenseKey: string; adminToken: string; opens: number } | undefined;
  let keda: Keda | undefined;
  const k = (args: string[], input?: string) => kubectl(node, args, input === undefined ? {} : { input });
  const get = async (kind: string, name: string): Promise<any> => {
    const output = await k(["get", kind, name, "-n", NAMESPACE, "-o", "json", "--ignore-not-found"]);
    return output.trim() ? JSON.parse(output) : undefined;
  };
  const owned = async () => (await k(["get", "deployments,services,networkpolicies,secrets,configmaps", "-n", NAMESPACE, "-l", "app.kubernetes.io/instance=docservice", "-o", "name"])).trim();
  const ready = (resource: any) => resource?.status?.conditions?.find((c: any) => c.type === "Ready")?.status === "True";

  /** `kubectl port-forward` to a Service; resolves with the local base URL. */
  async function portForward(service: string, port: number): Promise<string> {
    const child = spawn(cacheBin("kubectl"), ["--kubeconfig", node.kubeconfigPath, "-n", NAMESPACE, "port-forward", `service/${service}`, `:${port}`], { stdio: ["ignore", "pipe", "pipe"] });
    forwards.push(child);
    let output = "";
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    const local = () => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(output)?.[1];
    await waitFor(async () => local() !== undefined, { what: `port-forward to ${service}`, timeoutMs: 30_000, intervalMs: 100 });
    return `http://127.0.0.1:${local()}`;
  }

  const codeFromOutbox = (email: string) => codeFromOutboxOf(node, NAMESPACE, email);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "docservice-e2e-"));
    const archives = await buildPlatformImages();
    node = await startKubeNode();
    images.push(...(await importImages(node, archives)));
    await k(["create", "namespace", NAMESPACE]);
    // Pod Security Admission enforces "restricted" on everything the operator creates here.
    await k(["label", "namespace", NAMESPACE, "pod-security.kubernetes.io/enforce=restricted"]);
    // The Prometheus Operator's API, so that the chart installs its PodMonitor and PrometheusRule as it would beside kube-prometheus-stack.
    await k(["apply", "--server-side", "-f", prometheusOperatorCrdsFile()]);
    await waitForCrds(node, ["podmonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com"]);
  });

  after(async () => {
    for (const child of forwards) child.kill();
    await keda?.stop();
    await node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("helm install of the chart (its own CRD file) runs the operator from the built image", async () => {
    const values = join(dir, "values.yaml");
    // scraped every 5 s, so the monitoring test sees rates within seconds
    writeFileSync(values, `image:\n  pullPolicy: Never\nreplicas: 1\nmonitoring:\n  podMonitor:\n    interval: 5s\n`);
    await installOperator(node, NAMESPACE, values);
    const crd = JSON.parse(await k(["get", "crd", "docservices.docservice.dev", "-o", "json"]));
    assert.ok(JSON.stringify(crd).includes("x-kubernetes-validations"), "the chart's CRD keeps its CEL rules");
    // the chart's alerts; the PodMonitors are the operator's, one beside each DocService
    const monitoring = (await k(["get", "podmonitors,prometheusrules", "-n", NAMESPACE, "-o", "name"])).trim().split("\n").sort();
    assert.deepEqual(monitoring, ["prometheusrule.monitoring.coreos.com/docservice-operator"]);
  });

  test("kubectl apply of the minimal example: Ready, every Deployment available, register → key → convert → sign → pdfsig valid", async () => {
    await k(["apply", "-n", NAMESPACE, "-f", join(ROOT, "operator/examples/minimal.yaml")]);
    await waitFor(async () => ready(await get("docservice", "docservice")), { what: "the DocService Ready", timeoutMs: 5 * 60_000, intervalMs: 2000 });
    const table = await k(["get", "docservices", "-n", NAMESPACE]);
    console.log(table);
    assert.match(table, /docservice\s+True/);
    for (const component of ["gateway", "signing", "keys", "conversion", "telemetry-api"]) {
      const deployment = await get("deployment", `docservice-${component}`);
      assert.equal(deployment.status.availableReplicas, 1, component);
    }

    const base = await portForward("docservice-gateway", 80);
    const health = await call(base, "/v1/health");
    assert.equal(health.status, 200, JSON.stringify(health.body));
    const email = "e2e@example.test";
    assert.equal((await call(base, `/v1/auth/register?email=${encodeURIComponent(email)}`)).status, 200);
    const verified = await call(base, `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${await codeFromOutbox(email)}`);
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    const apiKey = verified.body.apiKey as string;

    const form = new FormData();
    form.set("file", new Blob([corpusFile("table.docx")]), "table.docx");
    const converted = await fetch(`${base}/v1/convert?from=docx`, { method: "POST", body: form, headers: { Authorization: `Bearer ${apiKey}` } });
    assert.equal(converted.status, 200, await converted.clone().text());
    const pdf = Buffer.from(await converted.arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), "%PDF-");

    const signed = await postJson(base, "/v1/sign", signBody(pdf), apiKey);
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    const file = join(dir, "signed.pdf");
    writeFileSync(file, Buffer.from(signed.body.document.base64, "base64"));
    const result = await pdfsig(file);
    assert.equal(result.signatures.length, 1, result.raw);
    assert.ok(result.signatures[0]!.valid, result.raw);
  });

  test("internal gRPC in the cluster is mutual TLS: a caller without the instance's client certificate cannot complete a call", async () => {
    // From the signing pod, with Node's own HTTP/2 client: a gRPC health check on the keys Service, without and with the pod's certificate.
    const script = `const http2 = require("http2"), fs = require("fs"), dir = "/etc/docservice/tls/";
      const call = (extra) => new Promise((done) => {
        const session = http2.connect("https://docservice-keys:50051", { ca: fs.readFileSync(dir + "ca.crt"), ...extra });
        session.on("error", (error) => done("refused " + error.code));
        const request = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/grpc", te: "trailers" });
        request.on("response", (headers) => { done("answered " + headers[":status"]); session.close(); });
        request.on("error", (error) => done("refused " + error.code));
        request.end(Buffer.alloc(5));
      });
      (async () => { console.log(await call({})); console.log(await call({ cert: fs.readFileSync(dir + "tls.crt"), key: fs.readFileSync(dir + "tls.key") })); })();`;
    const [without, withCertificate] = (await k(["exec", "-n", NAMESPACE, "deployment/docservice-signing", "--", "node", "-e", script])).trim().split("\n");
    assert.match(without!, /^refused /, "no client certificate: no call");
    assert.equal(withCertificate, "answered 200", "the component's own certificate: the call goes through");
  });

  test("the chart's CRD on the real cluster rejects what its CEL rules name, and fills defaults", async () => {
    const invalid = async (spec: object) =>
      k(["apply", "--dry-run=server", "-n", NAMESPACE, "-f", "-"], JSON.stringify({ apiVersion: "docservice.dev/v1alpha1", kind: "DocService", metadata: { name: "invalid" }, spec })).then(
        () => assert.fail(`accepted ${JSON.stringify(spec)}`),
        (error: Error) => error.message,
      );
    assert.match(await invalid({ version: "1", conversion: { backend: "gotenberg" } }), /gotenbergUrl is required when backend is gotenberg/);
    assert.match(await invalid({ version: "1", components: { signing: { autoscaling: { minReplicas: 5, maxReplicas: 2 } } } }), /minReplicas must not exceed maxReplicas/);
    assert.match(await invalid({ version: "1", autoscaling: { mode: "keda" } }), /autoscaling.mode keda needs kafka/);
    const stored = await get("docservice", "docservice");
    assert.equal(stored.spec.conversion.backend, "local");
    assert.equal(stored.spec.autoscaling.headroom, 1.3);
  });

  test("kubectl delete docservice removes everything it owns", async () => {
    assert.notEqual(await owned(), "");
    await k(["delete", "docservice", "docservice", "-n", NAMESPACE, "--wait=true"]);
    await waitFor(async () => (await owned()) === "", { what: "the owned objects to be garbage-collected", timeoutMs: 120_000, intervalMs: 1000 });
  });

  test("production shape: Kafka and Redis in the cluster, usage counted, the topic as declared, scaling, healing", async () => {
    await applyKafkaAndRedis(node, NAMESPACE);
    const adminToken = randomBytes(24).toString("base64url");
    await k(["create", "secret", "generic", "docservice-admin", "-n", NAMESPACE, `--from-literal=token=${adminToken}`]);
    const spec = {
      version: VERSION,
      kafka: { bootstrapServers: ["kafka:9092"], partitions: 3, replicationFactor: 1 },
      redis: { address: "redis:6379" },
      adminTokenSecret: { name: "docservice-admin", key: "token" },
      components: {
        signing: { autoscaling: { minReplicas: 1, maxReplicas: 2 }, resources: { requests: { cpu: "100m" } } },
        conversion: { autoscaling: { minReplicas: 1, maxReplicas: 2 }, resources: { requests: { cpu: "100m" } } },
      },
      // the conversion test watches a pod go once the load ends: 15 s rather than 5 minutes
      autoscaling: { scaleDownStabilizationSeconds: 15 },
    };
    const apply = (change: object) => k(["apply", "-n", NAMESPACE, "-f", "-"], JSON.stringify({ apiVersion: "docservice.dev/v1alpha1", kind: "DocService", metadata: { name: "docservice" }, spec: change }));
    await apply(spec);
    await waitFor(async () => ready(await get("docservice", "docservice")), { what: "the production DocService Ready", timeoutMs: 5 * 60_000, intervalMs: 2000 });
    console.log(await k(["get", "docservices", "-n", NAMESPACE]));
    assert.equal((await get("deployment", "docservice-telemetry-aggregator")).status.availableReplicas, 1);
    // the operator's HPA reads the signing pods' CPU through metrics-server: a number, not <unknown>
    await waitFor(async () => typeof (await get("hpa", "docservice-signing"))?.status?.currentMetrics?.[0]?.resource?.current?.averageUtilization === "number", {
      what: "the signing HPA to see its pods' CPU utilization",
      timeoutMs: 120_000,
      intervalMs: 2000,
    });

    // the operator's topic, read from inside the cluster with the Kafka client the image ships
    const partitions = await k([
      "exec", "-n", NAMESPACE, "deployment/docservice-telemetry-api", "--", "node", "--input-type=module", "-e",
      `const { Admin } = await import("@platformatic/kafka"); const admin = new Admin({ clientId: "e2e", bootstrapBrokers: ["kafka:9092"] });
       const metadata = await admin.metadata({ topics: ["docservice.usage.v1"] }); console.log(metadata.topics.get("docservice.usage.v1").partitionsCount); await admin.close();`,
    ]);
    assert.equal(partitions.trim(), "3");

    const base = await portForward("docservice-gateway", 80);
    const created = await postJson(base, "/v1/admin/license-keys", { customer: "e2e" }, adminToken);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const licenseKey = created.body.licenseKey as string;
    const documents = Array.from({ length: 20 }, (_, i) => `HASH-${String(i).padStart(8, "0")}`);
    for (const batch of [documents.slice(0, 10), documents.slice(10), documents.slice(0, 5)]) {
      const collected = await collect(base, report(batch), licenseKey);
      assert.equal(collected.status, 202, JSON.stringify(collected.body));
    }
    let counted: any;
    await waitFor(
      async () => {
        counted = (await usage(base, licenseKey, today(), today(), adminToken)).body;
        return counted.opens === 25;
      },
      { what: "25 opens counted through Kafka and Redis", timeoutMs: 120_000, intervalMs: 1000 },
    );
    assert.equal(counted.documents, 20);

    await apply({ ...spec, components: { ...spec.components, gateway: { replicas: 2 } } });
    await waitFor(async () => (await get("deployment", "docservice-gateway"))?.status?.readyReplicas === 2, { what: "the gateway scaled to 2", timeoutMs: 180_000, intervalMs: 1000 });

    const components = ["gateway", "signing", "keys", "conversion", "telemetry-api", "telemetry-aggregator"];
    const podOf = async (component: string) =>
      JSON.parse(await k(["get", "pods", "-n", NAMESPACE, "-l", `app.kubernetes.io/instance=docservice,app.kubernetes.io/component=${component}`, "-o", "json"])).items.map((p: any) => p.metadata.name as string);
    const killed = await Promise.all(components.map(async (component) => (await podOf(component))[0]!));
    await k(["delete", "pod", "-n", NAMESPACE, "--wait=false", ...killed]);
    await waitFor(
      async () => {
        const resource = await get("docservice", "docservice");
        const pods = (await Promise.all(components.map(podOf))).flat();
        return ready(resource) && killed.every((pod) => !pods.includes(pod));
      },
      { what: "every component healed with new pods", timeoutMs: 5 * 60_000, intervalMs: 2000 },
    );
    // a port-forward ends with the pod it picked: a new one to the healed gateway
    const healed = await portForward("docservice-gateway", 80);
    // counts survive the restarts (they live in Redis); the new gateway's first call may find a backend's new pod not yet in its Service
    await waitFor(async () => (await usage(healed, licenseKey, today(), today(), adminToken)).body.opens === 25, { what: "the 25 opens counted before the restarts", timeoutMs: 30_000, intervalMs: 1000 });
    production = { licenseKey, adminToken, opens: 25 };
  });

  test("conversion scales on its demand: the operator's external metrics API, read by the HPA through the API server, adds a pod under a burst of conversions and takes it away after; every conversion answered", async () => {
    const metricPath = `/apis/external.metrics.k8s.io/v1beta1/namespaces/${NAMESPACE}/docservice_conversion_demand?labelSelector=${encodeURIComponent("app.kubernetes.io/instance=docservice")}`;
    const demand = async () => {
      try {
        return JSON.parse(await k(["get", "--raw", metricPath])).items[0].value as string;
      } catch {
        return undefined;
      }
    };
    // the API server reaches the operator through the chart's APIService; the operator reads the conversion pods with the instance's token
    await waitFor(async () => (await demand()) === "0", { what: "the conversion demand through the API server, 0 at rest", timeoutMs: 120_000, intervalMs: 2000 });
    const hpa = await get("hpa", "docservice-conversion");
    assert.deepEqual(hpa.spec.metrics.map((m: any) => [m.type, m.external?.metric?.name]), [["External", "docservice_conversion_demand"]]);

    const base = await portForward("docservice-gateway", 80);
    const email = "conversion-load@example.test";
    assert.equal((await call(base, `/v1/auth/register?email=${encodeURIComponent(email)}`)).status, 200);
    const apiKey = (await call(base, `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${await codeFromOutbox(email)}`)).body.apiKey as string;
    const document = corpusFile("table.docx");
    const statuses = new Map<number, number>();
    let loading = true;
    const client = async () => {
      while (loading) {
        const form = new FormData();
        form.set("file", new Blob([document]), "table.docx");
        const answer = await fetch(`${base}/v1/convert?from=docx`, { method: "POST", body: form, headers: { Authorization: `Bearer ${apiKey}` } });
        await answer.arrayBuffer();
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      }
    };
    const started = Date.now();
    const timeline: string[] = [];
    const sample = async () => {
      const [current, deployment] = [await get("hpa", "docservice-conversion"), await get("deployment", "docservice-conversion")];
      const seen = current?.status?.currentMetrics?.[0]?.external?.current?.averageValue ?? "-";
      timeline.push(`${String(Math.round((Date.now() - started) / 1000)).padStart(5)} s  ${String(loading ? "on" : "off").padEnd(4)} ${String(seen).padStart(8)}  ${deployment?.spec?.replicas ?? "-"}/${deployment?.status?.readyReplicas ?? 0}`);
      return deployment;
    };
    // six clients against one pod's pool: conversions wait, demand passes 1/headroom per pod
    const clients = Array.from({ length: 6 }, client);
    try {
      await waitFor(async () => ((await sample())?.status?.readyReplicas ?? 0) >= 2, { what: "a second conversion pod, ready", timeoutMs: 240_000, intervalMs: 3000 });
    } finally {
      loading = false;
      await Promise.all(clients);
    }
    const scaledUpAfterS = Math.round((Date.now() - started) / 1000);
    await waitFor(async () => (await sample())?.spec?.replicas === 1, { what: "back to one conversion pod once the load ended", timeoutMs: 240_000, intervalMs: 3000 });
    console.log(`conversion under load: 2 pods ready ${scaledUpAfterS} s after the load began\n   time  load  demand/pod  replicas/ready\n${timeline.join("\n")}`);
    assert.deepEqual([...statuses.keys()], [200], `every conversion answered 200: ${JSON.stringify(Object.fromEntries(statuses))}`);
    assert.ok([...statuses.values()].reduce((a, b) => a + b, 0) > 6, "conversions were made");
  });

  test("monitoring on the real node: Prometheus scrapes every pod as the operator's PodMonitor says, with its token, every dashboard query has data, and the spool alert fires while Kafka is frozen and resolves once it thaws, usage exact", async () => {
    assert.ok(production, "the production DocService of the test before");
    const { licenseKey, adminToken } = production;
    const monitor = (await get("podmonitor", "docservice")) as PodMonitor;
    assert.ok(monitor, "the operator's PodMonitor beside the DocService");
    const [rule] = JSON.parse(await k(["get", "prometheusrules", "-n", NAMESPACE, "-o", "json"])).items;
    const secrets = new Map<string, Record<string, string>>();
    for (const { credentials } of monitor.spec.podMetricsEndpoints.flatMap((e) => (e.authorization ? [e.authorization] : []))) {
      secrets.set(credentials.name, (await get("secret", credentials.name)).data);
    }
    const secretValue = ({ name, key }: { name: string; key: string }) => Buffer.from(secrets.get(name)![key]!, "base64").toString();
    const rulesFile = join(dir, "rules.json");
    writeFileSync(rulesFile, JSON.stringify({ groups: withShortPending(rule.spec.groups, "20s") }));
    const targetsDir = mkdtempSync(join(dir, "targets-"));
    const discover = async () => writePodMonitorTargets(monitor, JSON.parse(await k(["get", "pods", "--all-namespaces", "-o", "json"])).items as Pod[], targetsDir);
    await discover();
    const prometheus = await startPrometheus({ scrapeConfigs: podMonitorScrapeConfigs(monitor, targetsDir, secretValue), ruleFiles: [rulesFile], intervalS: 5 });
    const explain = async (error: Error) => new Error(`${error.message}\nPrometheus targets:\n${await prometheus.targets()}`, { cause: error });
    try {
      const components = ["gateway", "signing", "keys", "conversion", "telemetry-api", "telemetry-aggregator"];
      await waitFor(
        async () => {
          await discover();
          const up = await prometheus.query(`up{namespace="${NAMESPACE}"} == 1`);
          return components.every((component) => up.some((series) => series.metric.pod?.startsWith(`docservice-${component}-`)));
        },
        { what: "every component's pod scraped (up == 1)", timeoutMs: 120_000, intervalMs: 2000 },
      ).catch(async (error: Error) => Promise.reject(await explain(error)));

      // what Prometheus reads with the token, another machine cannot without it
      const gatewayPod = JSON.parse(await k(["get", "pods", "-n", NAMESPACE, "-l", "app.kubernetes.io/instance=docservice,app.kubernetes.io/component=gateway", "-o", "json"])).items[0];
      const unauthenticated = await fetch(`http://${gatewayPod.status.podIP}:8080/metrics`);
      assert.equal(unauthenticated.status, 401, await unauthenticated.text());

      // a short load that touches every panel: a key, a conversion, a signature, a conversion refused, usage reports
      const base = await portForward("docservice-gateway", 80);
      const email = "monitoring@example.test";
      assert.equal((await call(base, `/v1/auth/register?email=${encodeURIComponent(email)}`)).status, 200);
      const apiKey = (await call(base, `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${await codeFromOutbox(email)}`)).body.apiKey as string;
      const convert = (bytes: Buffer) => {
        const form = new FormData();
        form.set("file", new Blob([bytes]), "document.docx");
        return fetch(`${base}/v1/convert?from=docx`, { method: "POST", body: form, headers: { Authorization: `Bearer ${apiKey}` } });
      };
      const converted = await convert(corpusFile("table.docx"));
      assert.equal(converted.status, 200, await converted.clone().text());
      const signed = await postJson(base, "/v1/sign", signBody(Buffer.from(await converted.arrayBuffer())), apiKey);
      assert.equal(signed.status, 200, JSON.stringify(signed.body));
      const refused = await convert(Buffer.from("not a DOCX at all"));
      assert.ok(refused.status >= 400 && refused.status < 500, `a file that is no DOCX: ${refused.status}`);
      const collected = await collect(base, report(["HASH-0000AA01", "HASH-0000AA02"]), licenseKey);
      assert.equal(collected.status, 202, JSON.stringify(collected.body));
      let opens = production.opens + 2;

      // Grafana's variables as it would fill them: the namespace, and a rate window of several scrapes
      const dashboard = monitoringQueries().filter((query) => query.where.startsWith("dashboard"));
      assert.ok(dashboard.length >= 20, `the dashboard's queries: ${dashboard.length}`);
      let empty: string[] = [];
      await waitFor(
        async () => {
          empty = [];
          for (const { where, expr } of dashboard) {
            const filled = expr.replaceAll("$namespace", NAMESPACE).replaceAll("$__rate_interval", "1m");
            if ((await prometheus.query(filled)).length === 0) empty.push(`${where}: ${filled}`);
          }
          return empty.length === 0;
        },
        { what: "data for every dashboard query", timeoutMs: 180_000, intervalMs: 5000 },
      ).catch(async (error: Error) => Promise.reject(await explain(new Error(`${error.message}; no data for:\n${empty.join("\n")}`))));
      console.log(`every one of the dashboard's ${dashboard.length} queries has data`);

      // Kafka frozen (its container's cgroup, so it neither answers nor exits) while reports keep coming: the intake spools them
      const spoolGrowing = async (state?: string) => (await prometheus.alerts()).some((alert) => alert.labels.alertname === "DocServiceSpoolGrowing" && (!state || alert.state === state));
      const kafkaContainer = (await get("pod", "kafka-0")).status.containerStatuses[0].containerID as string;
      await node.freezeContainer(kafkaContainer, true);
      const frozenAt = Date.now();
      let spooled = 0;
      try {
        while (!(await spoolGrowing("firing"))) {
          assert.ok(Date.now() - frozenAt < 240_000, `DocServiceSpoolGrowing did not fire within 4 minutes of Kafka frozen (${spooled} reports sent)`);
          const answer = await collect(base, report([`HASH-${(0xb0000000 + spooled).toString(16).toUpperCase()}`]), licenseKey);
          assert.equal(answer.status, 202, JSON.stringify(answer.body));
          spooled++;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      } finally {
        await node.freezeContainer(kafkaContainer, false);
      }
      console.log(`DocServiceSpoolGrowing fired ${((Date.now() - frozenAt) / 1000).toFixed(0)} s after Kafka froze, ${spooled} reports spooled`);
      opens += spooled;
      await waitFor(async () => !(await spoolGrowing()), { what: "DocServiceSpoolGrowing to resolve once Kafka thawed", timeoutMs: 180_000, intervalMs: 2000 });
      await waitFor(async () => (await usage(base, licenseKey, today(), today(), adminToken)).body.opens === opens, {
        what: `${opens} opens counted once the spool reached Kafka`,
        timeoutMs: 180_000,
        intervalMs: 2000,
      });
      production.opens = opens;
    } finally {
      await prometheus.stop();
    }
  });

  test("a rolling update of every Deployment to a second image tag, under load, fails no request and counts every acknowledged event", async () => {
    assert.ok(production, "the production-shape test ran");
    const { licenseKey, adminToken } = production;
    // the platform's images under a second tag, as a release would bring
    const next = `${VERSION}-next`;
    const platformImages = images.filter((name) => /(^|\/)docservice\/docservice(-conversion)?:/.test(name));
    assert.equal(platformImages.length, 2, `the core and conversion images: ${images.join(", ")}`);
    for (const image of platformImages) await node.tagImage(image, image.replace(/:[^:]+$/, `:${next}`));
    // through the gateway's Service, as a client in the cluster would (kube-proxy balances over its pods, and drops leaving ones)
    const base = `http://${(await get("service", "docservice-gateway")).spec.clusterIP}`;
    assert.equal((await call(base, "/v1/health")).status, 200);
    const email = "rollout@example.test";
    assert.equal((await call(base, `/v1/auth/register?email=${encodeURIComponent(email)}`)).status, 200);
    const apiKey = (await call(base, `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${await codeFromOutbox(email)}`)).body.apiKey as string;
    const form = () => {
      const body = new FormData();
      body.set("file", new Blob([corpusFile("table.docx")]), "table.docx");
      return body;
    };
    const pdf = Buffer.from(await (await fetch(`${base}/v1/convert?from=docx`, { method: "POST", body: form(), headers: { Authorization: `Bearer ${apiKey}` } })).arrayBuffer());
    const before = (await usage(base, licenseKey, today(), today(), adminToken)).body;

    const outcomes = new Map<string, number>();
    const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
    let acknowledged = 0;
    let sent = 0;
    let loading = true;
    const failures: string[] = [];
    const loop = (route: string, send: () => Promise<Response>, accepted: (answer: Response) => Promise<boolean>) => async () => {
      while (loading) {
        try {
          const answer = await send();
          if (await accepted(answer)) count(`${route} ok`);
          else {
            count(`${route} ${answer.status}`);
            // what a failed answer said (its body, unless the check read it), with when, against the rollout's progress
            if (failures.length < 10) failures.push(`${Math.round((Date.now() - started) / 1000)} s ${route} ${answer.status} ${answer.bodyUsed ? "" : (await answer.text()).slice(0, 300)}`);
          }
        } catch (error) {
          count(`${route} ${(error as Error).cause ?? (error as Error).message}`);
          if (failures.length < 10) failures.push(`${Math.round((Date.now() - started) / 1000)} s ${route} ${(error as Error).cause ?? (error as Error).message}`);
        }
      }
    };
    const collecting = loop(
      "collect",
      () => {
        // a document of its own per report, none of the earlier tests' (the spool test's are HASH-B…): distinct documents must come out exact too
        const body = JSON.stringify(report([`HASH-${(0xc0000000 + sent++).toString(16).toUpperCase()}`]));
        return fetch(`${base}/v1/collect`, { method: "POST", headers: { "Content-Type": "application/json", "X-License-Key": licenseKey }, body });
      },
      async (answer) => {
        const accepted = answer.status === 202 && ((await answer.json()) as { accepted: number }).accepted === 1;
        if (accepted) acknowledged++;
        return accepted;
      },
    );
    const converting = loop("convert", () => fetch(`${base}/v1/convert?from=docx`, { method: "POST", body: form(), headers: { Authorization: `Bearer ${apiKey}` } }), async (answer) => answer.status === 200 && (await answer.arrayBuffer()).byteLength > 0);
    const signing = loop(
      "sign",
      () => fetch(`${base}/v1/sign`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey}` }, body: JSON.stringify(signBody(pdf)) }),
      async (answer) => answer.status === 200 && typeof ((await answer.json()) as { document?: unknown }).document === "object",
    );
    const started = Date.now();
    const clients = [collecting, collecting, collecting, converting, signing].map((client) => client());
    const deployments = ["gateway", "signing", "keys", "conversion", "telemetry-api", "telemetry-aggregator"].map((component) => `docservice-${component}`);
    try {
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      await k(["patch", "docservice", "docservice", "-n", NAMESPACE, "--type=merge", "-p", JSON.stringify({ spec: { version: next } })]);
      // every Deployment rolled: its pods are the new tag's, all of them available, none of the old left
      await waitFor(
        async () => {
          const rolled = await Promise.all(
            deployments.map(async (name) => {
              const deployment = await get("deployment", name);
              const wanted = deployment.spec.replicas ?? 1;
              return (
                deployment.spec.template.spec.containers[0].image.endsWith(`:${next}`) &&
                deployment.status.observedGeneration >= deployment.metadata.generation &&
                deployment.status.updatedReplicas === wanted &&
                deployment.status.availableReplicas === wanted &&
                deployment.status.replicas === wanted
              );
            }),
          );
          return rolled.every(Boolean);
        },
        { what: `every Deployment rolled to ${next}`, timeoutMs: 8 * 60_000, intervalMs: 2000 },
      );
      // and the pods that left are gone, having finished what they held
      const podImages = async () => (await k(["get", "pods", "-n", NAMESPACE, "-l", "app.kubernetes.io/instance=docservice", "-o", "jsonpath={.items[*].spec.containers[0].image}"])).split(/\s+/);
      await waitFor(async () => !(await podImages()).some((image) => image.endsWith(`:${VERSION}`)), {
        what: "the old pods to be gone",
        timeoutMs: 3 * 60_000,
        intervalMs: 2000,
      });
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    } finally {
      loading = false;
      await Promise.all(clients);
    }
    const tally = Object.fromEntries([...outcomes].sort());
    if (failures.length > 0) console.log(`the first failures:\n${failures.join("\n")}`);
    console.log(`rolling update to ${next} under load, ${Math.round((Date.now() - started) / 1000)} s: ${JSON.stringify(tally)}`);
    assert.deepEqual(Object.keys(tally), ["collect ok", "convert ok", "sign ok"], `every request answered as it should be: ${JSON.stringify(tally)}`);
    const expected = { opens: before.opens + acknowledged, documents: before.documents + acknowledged };
    await waitFor(async () => (await usage(base, licenseKey, today(), today(), adminToken)).body.opens >= expected.opens, {
      what: `${expected.opens} opens counted`,
      timeoutMs: 180_000,
      intervalMs: 2000,
    });
    const after = (await usage(base, licenseKey, today(), today(), adminToken)).body;
    assert.deepEqual({ opens: after.opens, documents: after.documents }, expected, "every acknowledged event counted once");
  });

  test("with KEDA installed, the aggregator scales on its Kafka consumer lag: KEDA finds the brokers by the names its own namespace resolves, adds aggregators while one is stuck, every acknowledged event is counted once, and it scales back once the lag is gone", async () => {
    assert.ok(production, "the production-shape test ran");
    const { licenseKey, adminToken } = production;
    // One server per external metrics API: KEDA's adapter in place of the operator's (conversion then scales on its CPU)
    await helm(node, ["upgrade", "docservice-operator", join(ROOT, "charts/docservice-operator"), "-n", NAMESPACE, "--reuse-values", "--set", "externalMetrics.enabled=false", "--wait", "--timeout", "5m"]);
    keda = await startKeda(node, { namePrefix: "kube-node-", clusterDns: CLUSTER_DNS_IP });
    // KEDA came after the operator started: the DocService asks for it, and gives the aggregator bounds (no more pods than partitions)
    const maxAggregators = 3;
    await k(["patch", "docservice", "docservice", "-n", NAMESPACE, "--type=merge", "-p", JSON.stringify({ spec: { autoscaling: { mode: "keda" }, components: { telemetryAggregator: { autoscaling: { minReplicas: 1, maxReplicas: maxAggregators }, resources: { requests: { cpu: "50m" } } } } } })]);
    const name = "docservice-telemetry-aggregator";
    let kedaHpa: any;
    await waitFor(async () => (kedaHpa = await get("hpa", `keda-hpa-${name}`)) !== undefined && (await get("hpa", name)) === undefined, {
      what: "KEDA's HPA for the aggregator's ScaledObject, in place of the operator's own",
      timeoutMs: 120_000,
      intervalMs: 2000,
    });
    const scaledObject = await get("scaledobject", name);
    const { bootstrapServers, lagThreshold } = scaledObject.spec.triggers[0].metadata;
    assert.equal(bootstrapServers, `kafka.${NAMESPACE}.svc:9092`, "the DocService's kafka:9092, as KEDA's namespace must name it");
    // the lag through the API server: KEDA's operator reached the brokers and read the group's offsets
    const metric = kedaHpa.spec.metrics[0].external.metric;
    const lagPath = `/apis/external.metrics.k8s.io/v1beta1/namespaces/${NAMESPACE}/${metric.name}?labelSelector=${encodeURIComponent(`scaledobject.keda.sh/name=${name}`)}`;
    const lag = async () => Number(quantityValue(JSON.parse(await k(["get", "--raw", lagPath])).items[0].value as string));
    let lagError: unknown;
    await waitFor(async () => (await lag().catch((error: unknown) => void (lagError = error))) === 0, { what: "the aggregators' consumer lag, 0 at rest, read by KEDA", timeoutMs: 120_000, intervalMs: 2000 }).catch(async (error: Error) => {
      const conditions = JSON.stringify((await get("scaledobject", name))?.status?.conditions);
      throw new Error(`${error.message}\nthe last read: ${String(lagError)}\nScaledObject conditions: ${conditions}\n${keda!.tail()}`, { cause: error });
    });

    // One aggregator stuck (frozen: it neither consumes nor leaves): the lag grows to 1.5 × the threshold, which asks for 2 pods.
    // KEDA counts the lag in Kafka records, one per report: reports of one event, as an editor sends them
    const aggregators = async () => JSON.parse(await k(["get", "pods", "-n", NAMESPACE, "-l", "app.kubernetes.io/component=telemetry-aggregator", "-o", "json"])).items as any[];
    await k(["rollout", "status", "-n", NAMESPACE, `deployment/${name}`, "--timeout=180s"]);
    const [stuck, ...others] = (await aggregators()).filter((pod) => !pod.metadata.deletionTimestamp);
    assert.equal(others.length, 0, "one aggregator at rest");
    const stuckContainer = stuck.status.containerStatuses[0].containerID as string;
    const base = `http://${(await get("service", "docservice-gateway")).spec.clusterIP}`;
    const before = (await usage(base, licenseKey, today(), today(), adminToken)).body;
    const perReport = 1;
    const reports = Math.ceil(1.5 * Number(lagThreshold));
    const started = Date.now();
    const timeline: string[] = [];
    const sample = async () => {
      const deployment = await get("deployment", name);
      const opens = (await usage(base, licenseKey, today(), today(), adminToken)).body.opens as number;
      timeline.push(`${String(Math.round((Date.now() - started) / 1000)).padStart(5)} s  lag ${String(await lag().catch(() => "-")).padStart(7)}  aggregators ${deployment.spec.replicas}/${deployment.status.readyReplicas ?? 0}  opens ${opens - before.opens}`);
      return { deployment, opens };
    };
    const explain = async (error: Error) => {
      const pods = (await aggregators()).map((pod) => `${pod.metadata.name} ready=${pod.status.containerStatuses?.[0]?.ready} restarts=${pod.status.containerStatuses?.[0]?.restartCount}`);
      return new Error(`${error.message}\n${timeline.join("\n")}\n${pods.join("\n")}\n${keda!.tail()}`, { cause: error });
    };
    await node.freezeContainer(stuckContainer, true);
    try {
      const statuses = new Map<number, number>();
      let next = 0;
      const sender = async () => {
        for (let index = next++; index < reports; index = next++) {
          const ids = Array.from({ length: perReport }, (_, event) => `HASH-KEDA-${index}-${event}`);
          const answer = await collect(base, report(ids), licenseKey);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: 8 }, sender));
      assert.deepEqual(Object.fromEntries(statuses), { 202: reports }, "every report acknowledged");
      // KEDA adds aggregators while the first is still stuck; they take its partitions once its session times out (or
      // its liveness probe restarts it, after 2 minutes), and every event is counted, none twice
      const stuckRestarts = async () => (await aggregators()).find((pod) => pod.metadata.name === stuck.metadata.name)?.status.containerStatuses[0].restartCount;
      await waitFor(async () => (await sample()).deployment.spec.replicas >= 2, { what: "KEDA to add aggregators on the lag", timeoutMs: 90_000, intervalMs: 3000 });
      assert.equal(await stuckRestarts(), 0, "KEDA added aggregators while the first was still stuck");
      const expected = before.opens + reports * perReport;
      await waitFor(async () => (await sample()).opens === expected, { what: `${expected} opens counted`, timeoutMs: 180_000, intervalMs: 3000 });
    } catch (error) {
      throw await explain(error as Error);
    } finally {
      // a container its liveness probe restarted is gone, and its freeze with it
      await node.freezeContainer(stuckContainer, false).catch(() => {});
    }
    // the stuck one back, the lag gone: down to one aggregator, nothing counted twice
    await waitFor(async () => (await sample()).deployment.spec.replicas === 1, { what: "back to one aggregator once the lag is gone", timeoutMs: 180_000, intervalMs: 3000 }).catch(async (error: Error) => Promise.reject(await explain(error)));
    console.log(`the aggregator on its Kafka lag through KEDA (threshold ${lagThreshold} Kafka records per pod, one per report; ${reports} reports of ${perReport} event sent with one aggregator frozen):\n${timeline.join("\n")}`);
    const after = (await usage(base, licenseKey, today(), today(), adminToken)).body;
    assert.deepEqual({ opens: after.opens, documents: after.documents }, { opens: before.opens + reports * perReport, documents: before.documents + reports * perReport }, "every acknowledged event counted once");
  });

  test("kubectl delete of the production DocService removes everything it owns", async () => {
    await k(["delete", "docservice", "docservice", "-n", NAMESPACE, "--wait=true"]);
    await waitFor(async () => (await owned()) === "", { what: "the owned objects to be garbage-collected", timeoutMs: 120_000, intervalMs: 1000 });
  });
});
