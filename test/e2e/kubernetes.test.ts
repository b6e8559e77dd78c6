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
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { scenarioNamed } from "../../loadtest/scenarios.js";
import { writeFixtures } from "../../loadtest/target.js";
import type { SizingProfile } from "../../operator/sizing.js";
import { cacheBin } from "../support/cache.js";
import { quantityValue } from "../../operator/quantity.js";
import { corpusFile } from "../support/corpus.js";
import { EXPECTED_STATUS, ROUTES, startRamp, targetAt, windowOf, type RampResult, type Route, type RouteLoad, type Stage } from "../support/k6-ramp.js";
import { call } from "../support/key-flow.js";
import { startKeda, type Keda } from "../support/keda.js";
import { CLUSTER_DNS_IP, canRunContainers, startKubeNode, type KubeNode } from "../support/kube-node.js";
import { PLATFORM_VERSION, applyKafkaAndRedis, buildPlatformImages, codeFromOutbox as codeFromOutboxOf, helm, importImages, installOperator } from "../support/kube-platform.js";
import { haveMachineAlone, type MachineAlone } from "../support/machine-share.js";
import { kubectl, prometheusOperatorCrdsFile, waitForCrds } from "../support/kube.js";
import { monitoringQueries } from "../support/monitoring-queries.js";
import { pdfsig } from "../support/pdf-validators.js";
import { convertFile } from "../support/platform.js";
import { collect, report, today, usage } from "../support/usage-reports.js";
import { podMonitorScrapeConfigs, startPrometheus, withShortPending, writePodMonitorTargets, type Pod, type PodMonitor } from "../support/prometheus.js";
import { postJson, signBody } from "../support/sign-requests.js";
import { waitFor } from "../support/wait.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const NAMESPACE = "docservice-e2e";
const VERSION = PLATFORM_VERSION;
/**
 * The CPU request of a signing and of a conversion pod in the production-shape
 * DocService, in cores: a pod's capacity is the CPU it is given, so small pods
 * let several pods' worth of load fit the machine the tests run on. Conversion
 * is limited to its request (its demand, not its CPU, scales it); a signing pod
 * may use up to SIGNING_CPU_LIMIT while it starts.
 */
const POD_CPU = { signing: 0.1, conversion: 0.2 };
const SIGNING_CPU_LIMIT = 0.5;
/** Their autoscalers' upper bound: enough pods for the peak below, within the node's two cores of requests. */
const MAX_REPLICAS = { signing: 5, conversion: 4 };
/**
 * The CPU request of every other component's pod. A pod without one gets the
 * least CPU weight there is: in the surge the gateway's pods, starved by the
 * starting ones, failed their readiness probes together, and the gateway's
 * Service refused connections.
 */
const OTHER_POD_CPU = { gateway: 0.1, keys: 0.05, telemetryApi: 0.05 };
/**
 * What a conversion pod of POD_CPU.conversion does here under load, in
 * conversions per second of the 1-page DOCX: four such pods, saturated beside
 * the rest of the load, did 1.5 each. Less than the profile's per-core
 * capacity times its share of a core (2.8): the node's two cores are busy
 * with everything else too. The load after the peak is half of it.
 */
const CONVERSION_POD_RATE = 1.5;
/**
 * The autoscaling test's peak load, in one pod's capacity: what the machine's
 * two cores hold beside everything else. Signing's is a rate; conversion's,
 * virtual users converting back to back. A conversion pod runs one
 * LibreOffice instance (its pools follow its CPU limit), so one such user is
 * one pod's capacity on any machine, and the demand its autoscaler reads (the
 * conversions a pod holds per instance) is the users it serves. A rate would
 * need the pod's speed here: measured at rest it was up to 1.5 times off what
 * the pod did under the ramp, and a peak rate meant to pass one pod's capacity
 * stayed under its autoscaler's target for minutes.
 */
const PEAK_FACTOR = { sign: 2, convert: 2 };
/** How soon after the load passes one pod's capacity a second signing and a second conversion pod must be ready. */
const SCALE_UP_WITHIN_S = 90;
/** The end of the peak whose p95 must be back under each route's target. */
const RECOVERED_S = 30;
/**
 * Of the requests asked for while the added pods start, the share the platform
 * may shed: answered 503 with Retry-After (a pod's queue full), or not sent
 * because every one of k6's virtual users was waiting. Once every pod the
 * peak brought is ready, nothing may fail or go unsent.
 */
const SURGE_SHED_SHARE = 0.02;
/**
 * The rates above were set on a machine where the first conversion pod, alone
 * on the node, held each conversion of the ramp's DOCX 0.44 s (2.3 a second).
 * On a slower machine the same load is a larger share of its two cores: on one
 * that CI ran on, the ramp saturated the machine a quarter of the way up to its
 * peak. So the ramp first measures the one conversion pod's rate at rest, kept
 * busy with SPEED_PROBE_CONVERSIONS conversions two at a time (after one
 * unmeasured): its time per conversion, which its demand counts, not a
 * request's round trip (there 1.44 s one after another, where at 0.72 a second
 * the pod's demand was 0.77: 1.07 s each, and the peak meant to exceed one
 * pod's rate stayed under its autoscaler's target). Slower by more than
 * SPEED_TOLERANCE, every rate is multiplied by the ratio, and every p95
 * target divided by it.
 */
const REFERENCE_CONVERSION_S = 1 / 2.3;
const SPEED_PROBE_CONVERSIONS = 6;
const SPEED_TOLERANCE = 0.2;
/** How often an HPA reads its metrics: kube-controller-manager's default, which the test node keeps. */
const HPA_SYNC_PERIOD_S = 15;
/** From an HPA's reading to the replicas it sets: the operator reads the pods' /metrics for it (2 s at most) and the API server forwards it. */
const HPA_READING_LATENCY_S = 5;
/**
 * The load after the peak, at most, in seconds. It ends sooner, once every
 * Deployment has rolled, signing and conversion have each scaled down under
 * it, and no pod is leaving any more. On a slower machine that takes longer:
 * the rollout's pods start slower, and an HPA counts a pod not yet scraped at
 * its target when it would scale down, so signing's fewer pods come only once
 * its last new pod has metrics and the 45 s window has passed (with 105 s,
 * signing once rolled late and stayed at 5 pods until the load ended).
 */
const AFTER_LOAD_MAX_S = 180;
/** How long the autoscaling test waits for the test files running beside it to end (the longest takes minutes). */
const ALONE_WITHIN_MS = 10 * 60_000;
const profile = JSON.parse(readFileSync(join(ROOT, "loadtest/sizing-profile.json"), "utf8")) as SizingProfile;

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
  /** KEDA beside the node, once the aggregator's lag test started it. */
  let keda: Keda | undefined;
  /**
   * The machine alone: asked for by the monitoring test, for the ramp after it, and held until the KEDA test's reports
   * are sent (see there).
   */
  let machineAlone: Promise<MachineAlone> | undefined;
  const releaseMachine = async () => (await machineAlone?.catch(() => undefined))?.release();
  /** What the ramp's scale-down has left to do once its load is over, checked after the next test. */
  let afterRamp: Promise<void> | undefined;
  const k = (args: string[], input?: string) => kubectl(node, args, input === undefined ? {} : { input });
  const get = async (kind: string, name: string): Promise<any> => {
    const output = await k(["get", kind, name, "-n", NAMESPACE, "-o", "json", "--ignore-not-found"]);
    return output.trim() ? JSON.parse(output) : undefined;
  };
  /** Every pod of the instance, those terminating included. */
  const instancePods = async (): Promise<any[]> => JSON.parse(await k(["get", "pods", "-n", NAMESPACE, "-l", "app.kubernetes.io/instance=docservice", "-o", "json"])).items;
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
    await releaseMachine();
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

    const converted = await convertFile({ base, apiKey }, corpusFile("table.docx"), "table.docx", "docx");
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
        signing: { autoscaling: { minReplicas: 1, maxReplicas: MAX_REPLICAS.signing }, resources: { requests: { cpu: `${POD_CPU.signing * 1000}m` }, limits: { cpu: `${SIGNING_CPU_LIMIT * 1000}m` } } },
        conversion: { autoscaling: { minReplicas: 1, maxReplicas: MAX_REPLICAS.conversion }, resources: { requests: { cpu: `${POD_CPU.conversion * 1000}m` }, limits: { cpu: `${POD_CPU.conversion * 1000}m` } } },
        gateway: { resources: { requests: { cpu: `${OTHER_POD_CPU.gateway * 1000}m` } } },
        keys: { resources: { requests: { cpu: `${OTHER_POD_CPU.keys * 1000}m` } } },
        telemetryApi: { resources: { requests: { cpu: `${OTHER_POD_CPU.telemetryApi * 1000}m` } } },
      },
      // the autoscaling test's whole load comes from this machine, as it would from an ingress's pods
      limits: { maxConnectionsPerClient: 4096 },
      // the autoscaling test watches pods go once the load is down: 45 s rather than 5 minutes. Not less: conversion's demand is
      // a gauge of the moment, and with 15 s one quiet scrape at the peak took 3 of its 4 pods away (the HPA counts a period's
      // scale-down from the replicas at its start, before the scale-up)
      autoscaling: { scaleDownStabilizationSeconds: 45 },
    };
    const apply = (change: object) => k(["apply", "-n", NAMESPACE, "-f", "-"], JSON.stringify({ apiVersion: "docservice.dev/v1alpha1", kind: "DocService", metadata: { name: "docservice" }, spec: change }));
    await apply(spec);
    await waitFor(async () => ready(await get("docservice", "docservice")), { what: "the production DocService Ready", timeoutMs: 10 * 60_000, intervalMs: 2000 });
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

    await apply({ ...spec, components: { ...spec.components, gateway: { ...spec.components.gateway, replicas: 2 } } });
    await waitFor(async () => (await get("deployment", "docservice-gateway"))?.status?.readyReplicas === 2, { what: "the gateway scaled to 2", timeoutMs: 180_000, intervalMs: 1000 });

    const components = ["gateway", "signing", "keys", "conversion", "telemetry-api", "telemetry-aggregator"];
    const podOf = async (component: string) =>
      JSON.parse(await k(["get", "pods", "-n", NAMESPACE, "-l", `app.kubernetes.io/instance=docservice,app.kubernetes.io/component=${component}`, "-o", "json"])).items.map((p: any) => p.metadata.name as string);
    const killed = await Promise.all(components.map(async (component) => (await podOf(component))[0]!));
    await k(["delete", "pod", "-n", NAMESPACE, "--wait=false", ...killed]);
    await waitFor(
      async () => {
        const resource = await get("docservice", "docservice");
        const pods = (await instancePods()).map((pod) => pod.metadata.name as string);
        return ready(resource) && killed.every((pod) => !pods.includes(pod));
      },
      { what: "every component healed with new pods", timeoutMs: 10 * 60_000, intervalMs: 2000 },
    );
    // a port-forward ends with the pod it picked: a new one to the healed gateway
    const healed = await portForward("docservice-gateway", 80);
    // counts survive the restarts (they live in Redis); the new gateway's first call may find a backend's new pod not yet in its Service
    await waitFor(async () => (await usage(healed, licenseKey, today(), today(), adminToken)).body.opens === 25, { what: "the 25 opens counted before the restarts", timeoutMs: 120_000, intervalMs: 1000 });
    production = { licenseKey, adminToken, opens: 25 };
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
      const convert = (bytes: Buffer) => convertFile({ base, apiKey }, bytes, "document.docx", "docx");
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
      // the ramp after this test has the machine alone: asked for now, the test files running end while the rest of this
      // test runs, and no new one starts. Asked for sooner, the machine idled while this test waited for the alert.
      machineAlone = haveMachineAlone(ALONE_WITHIN_MS);
      machineAlone.catch(() => {});
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

  test("autoscaling under a k6 ramp through the gateway's Service: signing and conversion scale up past one pod's capacity and p95 recovers, a rolling update of every Deployment and a scale-down fail no request, usage exact", { timeout: ALONE_WITHIN_MS + 15 * 60_000 }, async () => {
    assert.ok(production, "the production-shape test ran");
    const { licenseKey, adminToken } = production;
    const asked = Date.now();
    // conversion's signal is its demand, served by the operator as an external metric that the API server forwards.
    // Read while the other test files end, not just before the speed probe below: each reading's mean spans back to the
    // reading before it, so the autoscaler's first reading after ours would average the probe over a few seconds, pass
    // conversion's target and add a pod, which the ramp would then wait to see leave.
    const metricPath = `/apis/external.metrics.k8s.io/v1beta1/namespaces/${NAMESPACE}/docservice_conversion_demand?labelSelector=${encodeURIComponent("app.kubernetes.io/instance=docservice")}`;
    const demand = async () => JSON.parse(await k(["get", "--raw", metricPath])).items[0].value as string;
    await waitFor(async () => (await demand().catch(() => undefined)) === "0", { what: "the conversion demand through the API server, 0 at rest", timeoutMs: 120_000, intervalMs: 2000 });
    const demandReadAt = Date.now();
    const conversionHpa = await get("hpa", "docservice-conversion");
    assert.deepEqual(conversionHpa.spec.metrics.map((m: any) => [m.type, m.external?.metric?.name]), [["External", "docservice_conversion_demand"]]);
    assert.equal((await get("hpa", "docservice-signing")).spec.metrics[0].resource.name, "cpu");
    // the ramp is sized to the machine's two cores: beside another test file, neither its rates nor the p95 targets could hold
    // (held on through the next test's sending of reports)
    await (machineAlone ??= haveMachineAlone(ALONE_WITHIN_MS));
    console.log(`the machine to the ramp alone once the other test files running had ended, ${((Date.now() - asked) / 1000).toFixed(0)} s after the ramp's test began`);

    // the platform's images under a second tag, as a release would bring
    const next = `${VERSION}-next`;
    const platformImages = images.filter((name) => /(^|\/)docservice\/docservice(-conversion)?:/.test(name));
    assert.equal(platformImages.length, 2, `the core and conversion images: ${images.join(", ")}`);
    for (const image of platformImages) await node.tagImage(image, image.replace(/:[^:]+$/, `:${next}`));
    // through the gateway's Service, as a client in the cluster would (kube-proxy balances over its pods, and drops leaving ones)
    const base = `http://${(await get("service", "docservice-gateway")).spec.clusterIP}`;
    const email = "ramp@example.test";
    assert.equal((await call(base, `/v1/auth/register?email=${encodeURIComponent(email)}`)).status, 200);
    const apiKey = (await call(base, `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${await codeFromOutbox(email)}`)).body.apiKey as string;
    const fixtures = await writeFixtures(dir);
    const before = (await usage(base, licenseKey, today(), today(), adminToken)).body;

    // this machine's speed (see REFERENCE_CONVERSION_S), with the machine at rest
    const docx = readFileSync(fixtures.env.DOCX_FILE);
    const convertOnce = async () => {
      const converted = await convertFile({ base, apiKey }, docx, "ramp.docx", "docx");
      const body = Buffer.from(await converted.arrayBuffer());
      assert.equal(converted.status, 200, body.toString());
    };
    // the autoscaler's own reading between ours and the probe, when the files ended sooner than that (see above)
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, demandReadAt + (HPA_SYNC_PERIOD_S + HPA_READING_LATENCY_S) * 1000 - Date.now())));
    await convertOnce();
    // two at a time: the next conversion waits in the pod while one converts, so the pod is never idle between them
    const probeStarted = performance.now();
    await Promise.all([0, 1].map(async () => {
      for (let i = 0; i < SPEED_PROBE_CONVERSIONS / 2; i++) await convertOnce();
    }));
    const conversionS = (performance.now() - probeStarted) / 1000 / SPEED_PROBE_CONVERSIONS;
    const speed = REFERENCE_CONVERSION_S / conversionS;
    const scale = speed < 1 - SPEED_TOLERANCE ? speed : 1;
    console.log(`this machine: a conversion in ${conversionS.toFixed(2)} s against ${REFERENCE_CONVERSION_S.toFixed(2)} s where the rates were set, speed ${speed.toFixed(2)}: the ramp's rates × ${scale.toFixed(2)}, its p95 targets ÷ ${scale.toFixed(2)}`);
    // two at a time passed conversion's target: its autoscaler's next reading may add a pod, which the scale-up gate below
    // would count as the ramp's. A reading's demand is the mean since the reading before it (operator/conversion-demand.ts),
    // so only a reading within one period of the probe's end sees the probe: by then it has added its pod, or none will.
    await new Promise((resolve) => setTimeout(resolve, (HPA_SYNC_PERIOD_S + HPA_READING_LATENCY_S) * 1000));
    await waitFor(
      async () => {
        const conversion = await get("deployment", "docservice-conversion");
        return conversion.spec.replicas === 1 && conversion.status.replicas === 1 && conversion.status.readyReplicas === 1;
      },
      { what: "conversion back to one pod after the probe", timeoutMs: 180_000, intervalMs: 2000 },
    );
    console.log(`the ramp starts ${((Date.now() - asked) / 1000).toFixed(0)} s after its test began`);
    // One pod's capacity here: signing's, the profile's per-core capacity times the pod's CPU; conversion's, as measured;
    // both times this machine's speed. Signing's load goes to PEAK_FACTOR times it.
    const onePod = { sign: profile.components.signing!.requestsPerSecond * POD_CPU.signing * scale, convert: CONVERSION_POD_RATE * scale };
    const rates = {
      sign: { peak: onePod.sign * PEAK_FACTOR.sign, after: onePod.sign * 0.5 },
      convert: { after: onePod.convert * 0.5 },
      collect: { peak: 20 * scale, after: 20 * scale },
    };
    // up, held at the peak, then at half a pod's worth while every Deployment rolls and the autoscalers take pods away; the
    // peak outlasts the surge (the last added pod ready at 80-105 s) by RECOVERED_S and a margin
    const phases = { rampS: 60, peakS: 110, afterS: AFTER_LOAD_MAX_S };
    const atRates = (rate: { peak?: number; after: number }): Stage[] => [
      { target: rate.peak ?? 0, seconds: phases.rampS },
      { target: rate.peak ?? 0, seconds: phases.peakS },
      { target: rate.after, seconds: 5 },
      { target: rate.after, seconds: phases.afterS },
      { target: 0, seconds: 5 },
    ];
    // conversion's users come one at a time: a pod's worth at once, then past it when the second starts
    const onePodUntilS = phases.rampS / PEAK_FACTOR.convert;
    const users: Stage[] = [
      { target: 1, seconds: 1 },
      { target: 1, seconds: onePodUntilS - 1 },
      { target: PEAK_FACTOR.convert, seconds: 1 },
      { target: PEAK_FACTOR.convert, seconds: phases.rampS - onePodUntilS - 1 + phases.peakS },
      // then the rate's half a pod, while they finish what they hold
      { target: 0, seconds: 5 },
    ];
    const load: Record<Route, RouteLoad> = {
      sign: { rates: atRates(rates.sign) },
      convert: { rates: atRates(rates.convert), users },
      collect: { rates: atRates(rates.collect) },
    };
    const peakEndS = phases.rampS + phases.peakS;
    const rolloutAtS = peakEndS + 5;
    /** When the load ended: its stages' end, or sooner (below). */
    let loadEndS = rolloutAtS + phases.afterS + 5;
    const ramp = await startRamp(cacheBin("k6"), load, {
      BASE_URL: base,
      API_KEY: apiKey,
      LICENSE_KEY: licenseKey,
      // virtual users for the peak rate through waits of seconds (while added pods start), all made before the load
      // starts: k6 drops an iteration that finds every one busy while it makes another
      PRE_VUS: "400",
      MAX_VUS: "400",
      ...fixtures.env,
      },
      rolloutAtS,
    );
    const secondsIn = () => (Date.now() - ramp.startedAt) / 1000;
    const deployments = ["gateway", "signing", "keys", "conversion", "telemetry-api", "telemetry-aggregator"].map((component) => `docservice-${component}`);
    /** When each Deployment had rolled, in seconds of the ramp. */
    const rolledAt = new Map<string, number>();

    // every 3 s, the replicas the autoscalers asked for and those ready
    const scaled = ["signing", "conversion"] as const;
    const samples: Array<{ atS: number; replicas: Record<string, [number, number]>; seen: Record<string, string> }> = [];
    // The load after the peak ends once every Deployment has rolled, signing and conversion have each scaled down under
    // it, and no pod is leaving: every old pod and every pod scaled away has drained and gone while the load ran.
    const wantedIn = (sample: (typeof samples)[number], component: string) => sample.replicas[component]?.[0] ?? 0;
    const peakOf = (component: string) => Math.max(...samples.map((sample) => wantedIn(sample, component)));
    /** The replicas wanted of a component while the load after the peak ran (so far). */
    const afterPeak = (component: string) => samples.filter((sample) => sample.atS >= rolloutAtS && sample.atS < loadEndS).map((sample) => wantedIn(sample, component));
    const scaledDownUnderLoad = (component: string) => afterPeak(component).some((replicas) => replicas < peakOf(component));
    const podsLeaving = async () =>
      (await instancePods()).filter((pod) => pod.metadata.deletionTimestamp || pod.spec.containers[0].image.endsWith(`:${VERSION}`)).length;
    let ending: Promise<void> | undefined;
    let loading = true;
    const sampling = (async () => {
      while (loading) {
        const atS = secondsIn();
        const items = JSON.parse(await k(["get", "deployments,hpa", "-n", NAMESPACE, "-l", "app.kubernetes.io/instance=docservice", "-o", "json"])).items as any[];
        const replicas: Record<string, [number, number]> = {};
        const seen: Record<string, string> = {};
        for (const item of items) {
          const component = item.metadata.labels["app.kubernetes.io/component"];
          if (item.kind === "Deployment") replicas[component] = [item.spec.replicas ?? 0, item.status.readyReplicas ?? 0];
          // what the autoscaler saw: the pods' CPU in % of their request, or conversion's demand per pod
          const metric = item.status?.currentMetrics?.[0];
          if (item.kind === "HorizontalPodAutoscaler") seen[component] = String(metric?.resource?.current?.averageUtilization ?? metric?.external?.current?.averageValue ?? "-");
        }
        samples.push({ atS, replicas, seen });
        if (!ending && rolledAt.size === deployments.length && scaled.every(scaledDownUnderLoad) && (await podsLeaving()) === 0) {
          loadEndS = secondsIn();
          ending = ramp.end();
          // awaited once k6 has exited (below): until then a failure must not count as unhandled
          ending.catch(() => {});
        }
        await new Promise((resolve) => setTimeout(resolve, 3000));
      }
    })();
    // the pods' own account of what went wrong (warnings and errors), read before the rollout replaces them and after it
    const podComplaints: string[] = [];
    const readComplaints = async () => {
      const logs = await k(["logs", "-n", NAMESPACE, "-l", "app.kubernetes.io/instance=docservice", "--prefix", "--tail=-1", "--max-log-requests=40", "--since=15m"]).catch((error: Error) => error.message);
      for (const line of logs.split("\n")) if (/"level":(40|50|60)\b/.test(line) && !podComplaints.includes(line)) podComplaints.push(line);
    };
    // the rolling update of every Deployment, once the load is down to one pod's capacity
    const rollout = (async () => {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, ramp.startedAt + rolloutAtS * 1000 - Date.now())));
      await readComplaints();
      await k(["patch", "docservice", "docservice", "-n", NAMESPACE, "--type=merge", "-p", JSON.stringify({ spec: { version: next } })]);
      // every Deployment rolled: its pods all the new tag's and available, and every old pod told to leave (status.replicas
      // counts no terminating pod); the old pods' draining, begun under the load, may end after it
      await waitFor(
        async () => {
          // one kubectl for all six: the machine is the ramp's
          const items = JSON.parse(await k(["get", "deployments", "-n", NAMESPACE, "-l", "app.kubernetes.io/instance=docservice", "-o", "json"])).items as any[];
          for (const deployment of items) {
            const name = deployment.metadata.name;
            if (rolledAt.has(name) || !deployments.includes(name)) continue;
            const wanted = deployment.spec.replicas ?? 1;
            const rolled =
              deployment.spec.template.spec.containers[0].image.endsWith(`:${next}`) &&
              deployment.status.observedGeneration >= deployment.metadata.generation &&
              deployment.status.updatedReplicas === wanted &&
              deployment.status.availableReplicas === wanted &&
              deployment.status.replicas === wanted;
            if (rolled) rolledAt.set(name, secondsIn());
          }
          return rolledAt.size === deployments.length;
        },
        { what: `every Deployment rolled to ${next}`, timeoutMs: 6 * 60_000, intervalMs: 2000 },
      );
      return secondsIn();
    })();
    let result: RampResult;
    try {
      result = await ramp.done;
      await ending;
    } finally {
      loading = false;
      await sampling;
    }
    const rolledAtS = await rollout;
    console.log(
      ending
        ? `the load after the peak ended at ${loadEndS.toFixed(0)} s: every Deployment rolled, signing and conversion scaled down under it, no pod leaving`
        : `the load after the peak ran its ${AFTER_LOAD_MAX_S} s`,
    );
    await readComplaints();

    // the table: per 10 s of load, each route's target (a rate, or users), requests, p95, and what failed or went unsent,
    // and the replicas at its end
    const rows = [`   time  sign/s  n    p95 ms  conv/s  n    p95 ms  coll/s  n    p95 ms  failed unsent      signing      conversion`];
    for (let fromS = 0; fromS < loadEndS; fromS += 10) {
      const window = windowOf(result, fromS * 1000, (fromS + 10) * 1000);
      const lastSample = samples.filter((sample) => sample.atS < fromS + 10).at(-1);
      const last = lastSample?.replicas ?? {};
      const failed = ROUTES.reduce((sum, route) => sum + [...window[route].failures.values()].reduce((a, b) => a + b, 0), 0);
      const unsent = ROUTES.reduce((sum, route) => sum + window[route].dropped, 0);
      const target = (route: Route) => {
        const usersAt = targetAt(load[route].users, fromS + 5);
        return usersAt > 0 ? `${usersAt.toFixed(0)} u` : targetAt(load[route].rates, fromS + 5).toFixed(1);
      };
      const cell = (route: Route) => `${target(route).padStart(6)}  ${String(window[route].requests).padStart(4)} ${window[route].p95Ms.toFixed(0).padStart(6)}`;
      const replicas = (component: string) => `${last[component] ? `${last[component]![0]}/${last[component]![1]}` : "-"} ${lastSample?.seen[component] ?? "-"}`.padStart(component.length + 4);
      const event = fromS <= rolloutAtS && rolloutAtS < fromS + 10 ? "  rollout starts" : fromS <= rolledAtS && rolledAtS < fromS + 10 ? "  rollout done" : "";
      rows.push(
        `${String(fromS).padStart(5)} s  ${cell("sign")}  ${cell("convert")}  ${cell("collect")}  ${String(failed).padStart(6)} ${String(unsent).padStart(6)}  ${replicas("signing")}  ${replicas("conversion")}${event}`,
      );
    }
    console.log(`autoscaling under load (replicas wanted/ready, then what the HPA saw: signing's CPU in % of its request, conversion's demand per pod; pods given ${POD_CPU.signing} and ${POD_CPU.conversion} of a core, one pod's capacity ${onePod.sign.toFixed(0)} signs/s and one conversion at a time, ${onePod.convert.toFixed(1)} a second; "u": users converting back to back):\n${rows.join("\n")}`);

    // scale-up: a second pod of each, ready, within SCALE_UP_WITHIN_S of the load passing one pod's capacity
    const passedOnePodS = { signing: phases.rampS / PEAK_FACTOR.sign, conversion: onePodUntilS };
    for (const component of scaled) {
      const afterS = (samples.find((sample) => (sample.replicas[component]?.[1] ?? 0) >= 2)?.atS ?? Infinity) - passedOnePodS[component];
      assert.ok(afterS <= SCALE_UP_WITHIN_S, `${component}: a second pod ready ${afterS.toFixed(0)} s after the load passed one pod's capacity (at most ${SCALE_UP_WITHIN_S} s)`);
    }
    // the surge lasts until every pod the peak brought is ready, before the last RECOVERED_S of the peak
    const peakSamples = samples.filter((sample) => sample.atS < peakEndS);
    const fullyUpAtS = scaled.map((component) => {
      const most = Math.max(...peakSamples.map((sample) => sample.replicas[component]?.[1] ?? 0));
      return peakSamples.find((sample) => (sample.replicas[component]?.[1] ?? 0) === most)!.atS;
    });
    const surgeEndS = Math.max(...fullyUpAtS);
    const recoveredFromS = peakEndS - RECOVERED_S;
    assert.ok(surgeEndS <= recoveredFromS, `both scaled up before the last ${RECOVERED_S} s of the peak: at ${fullyUpAtS.map((at) => at.toFixed(0)).join(" and ")} s`);

    // what failed: in the surge, only load shed (503, or not sent) and little of it; after it, through the rollout and the scale-down, nothing
    const failed = new Map<string, { count: number; fromS: number; toS: number }>();
    for (const request of result.requests.filter((r) => r.status !== EXPECTED_STATUS[r.route])) {
      const what = `${request.route} ${request.status} ${request.error}`;
      const seen = failed.get(what) ?? { count: 0, fromS: request.atMs / 1000, toS: 0 };
      failed.set(what, { ...seen, count: seen.count + 1, toS: request.atMs / 1000 });
    }
    const failedText = [...failed].map(([what, { count, fromS, toS }]) => `${what}: ${count}, from ${fromS.toFixed(1)} s to ${toS.toFixed(1)} s`).join("\n");
    // per pod, its first few warnings and errors (one pod's repeated errors would hide the others'), the node's warning events, and restarts
    const byPod = new Map<string, string[]>();
    for (const line of podComplaints) {
      const pod = /^\[([^\]]+)\]/.exec(line)?.[1] ?? "?";
      byPod.set(pod, [...(byPod.get(pod) ?? []), line.slice(0, 600)]);
    }
    const warningEvents = await k(["get", "events", "-n", NAMESPACE, "--field-selector", "type=Warning", "-o", "custom-columns=LAST:.lastTimestamp,COUNT:.count,REASON:.reason,OBJECT:.involvedObject.name,MESSAGE:.message"]).catch((error: Error) => error.message);
    const restarts = await k(["get", "pods", "-n", NAMESPACE, "-o", "custom-columns=POD:.metadata.name,RESTARTS:.status.containerStatuses[0].restartCount,LAST:.status.containerStatuses[0].lastState.terminated.reason"]).catch((error: Error) => error.message);
    const complaints = `what the pods logged (warnings and errors, the first 5 of each pod):\n${[...byPod.values()].flatMap((lines) => lines.slice(0, 5)).join("\n") || "nothing"}\nwarning events:\n${warningEvents}\nrestarts:\n${restarts}`;
    const surge = windowOf(result, 0, surgeEndS * 1000);
    const afterSurge = windowOf(result, surgeEndS * 1000, Infinity);
    console.log(`the surge, until ${surgeEndS.toFixed(0)} s: ${ROUTES.map((route) => `${route} ${surge[route].failures.get(503) ?? 0} shed with 503, ${surge[route].dropped} not sent, of ${surge[route].requests + surge[route].dropped}`).join("; ")}`);
    for (const route of ROUTES) {
      const { requests, failures, dropped } = surge[route];
      const shed = (failures.get(503) ?? 0) + dropped;
      assert.deepEqual([...failures.keys()].filter((status) => status !== 503), [], `${route}: in the surge, only 503s may fail:\n${failedText}\n${complaints}`);
      assert.ok(shed <= SURGE_SHED_SHARE * (requests + dropped), `${route}: ${shed} of ${requests + dropped} requests shed in the surge (at most ${SURGE_SHED_SHARE * 100} %)`);
    }
    const failures = Object.fromEntries(ROUTES.map((route) => [route, { failed: Object.fromEntries(afterSurge[route].failures), unsent: afterSurge[route].dropped }]));
    const none = Object.fromEntries(ROUTES.map((route) => [route, { failed: {}, unsent: 0 }]));
    assert.deepEqual(failures, none, `from ${surgeEndS.toFixed(0)} s on, requests that failed (route, status, k6's error) or went unsent:\n${failedText}\n${complaints}`);

    // p95 back under each route's target by the end of the peak, over its last RECOVERED_S (the queue built in the surge is drained by then)
    const recovered = windowOf(result, recoveredFromS * 1000, peakEndS * 1000);
    const eachRolled = [...rolledAt].map(([name, atS]) => `${name} ${atS.toFixed(0)} s`).join(", ");
    console.log(`the rollout from ${rolloutAtS} s, each Deployment rolled at: ${eachRolled}`);
    console.log(`p95 from ${recoveredFromS.toFixed(0)} s to ${peakEndS} s: ${ROUTES.map((route) => `${route} ${recovered[route].p95Ms.toFixed(0)} ms`).join(", ")}`);
    // the routes whose components scale (collect's p95 is printed: its gateway and telemetry pods have small requests and wait whenever the node is busy)
    // Each target was set where the rates were, so it is divided by this machine's speed as the rates are multiplied: where
    // one conversion alone takes over 2 s, conversion's 3 s leaves no room for the one waiting behind it.
    for (const route of ["sign", "convert"] as const) {
      const target = Math.round(scenarioNamed(route).p95Ms / scale);
      assert.ok(recovered[route].p95Ms < target, `${route}: p95 ${recovered[route].p95Ms.toFixed(0)} ms from ${recoveredFromS.toFixed(0)} s to ${peakEndS} s, after the scale-up (target ${target} ms)`);
    }
    // the rollout finished while the load ran; the scale-down began under the load after the peak, and ends at one pod once it is over
    assert.ok(rolledAtS < loadEndS, `every Deployment rolled (its old pods told to leave) at ${rolledAtS.toFixed(0)} s (${eachRolled}), before the load ended at ${loadEndS.toFixed(0)} s`);
    for (const component of scaled) {
      const peak = peakOf(component);
      const underLoad = afterPeak(component);
      assert.ok(underLoad.some((replicas) => replicas < peak), `${component}: scaled down from ${peak} while the load after the peak ran: ${underLoad.join(", ")}`);
    }
    // every acknowledged report counted once, each its own document
    const acknowledged = result.requests.filter((request) => request.route === "collect" && request.status === EXPECTED_STATUS.collect).length;
    const expected = { opens: before.opens + acknowledged, documents: before.documents + acknowledged };
    await waitFor(async () => (await usage(base, licenseKey, today(), today(), adminToken)).body.opens >= expected.opens, {
      what: `${expected.opens} opens counted`,
      timeoutMs: 180_000,
      intervalMs: 2000,
    });
    const after = (await usage(base, licenseKey, today(), today(), adminToken)).body;
    assert.deepEqual({ opens: after.opens, documents: after.documents }, expected, "every acknowledged event counted once");

    // the old pods' draining and the scale-down to one pod take minutes without load: they go on while the next test runs
    const podImages = async () => (await k(["get", "pods", "-n", NAMESPACE, "-l", "app.kubernetes.io/instance=docservice", "-o", "jsonpath={.items[*].spec.containers[0].image}"])).split(/\s+/);
    afterRamp = (async () => {
      await waitFor(async () => !(await podImages()).some((image) => image.endsWith(`:${VERSION}`)), { what: `the pods of ${VERSION} gone`, timeoutMs: 3 * 60_000, intervalMs: 2000 });
      await waitFor(async () => (await Promise.all(scaled.map(async (component) => (await get("deployment", `docservice-${component}`)).status.readyReplicas))).every((ready) => ready === 1), {
        what: "signing and conversion back to one pod once the ramp's load ended",
        timeoutMs: 5 * 60_000,
        intervalMs: 3000,
      });
    })();
    afterRamp.catch(() => {});
  });

  test("with KEDA installed, the aggregator scales on its Kafka consumer lag: KEDA finds the brokers by the names its own namespace resolves, adds aggregators while one is stuck, every acknowledged event is counted once, and it scales back once the lag is gone", { timeout: ALONE_WITHIN_MS + 15 * 60_000 }, async (t) => {
    // The reports are sent with the machine still the ramp's alone: beside other test files, sending them took minutes
    // rather than half of one, and the stuck aggregator's liveness probe restarted it before KEDA could act on the lag
    t.after(releaseMachine);
    await (machineAlone ??= haveMachineAlone(ALONE_WITHIN_MS));
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
      await releaseMachine();
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

  test("after the ramp: the old version's pods gone, and signing and conversion back to one pod (while the test before ran)", async () => {
    assert.ok(afterRamp, "the ramp's test ran");
    await afterRamp;
  });

  test("kubectl delete of the production DocService removes everything it owns", async () => {
    await k(["delete", "docservice", "docservice", "-n", NAMESPACE, "--wait=true"]);
    await waitFor(async () => (await owned()) === "", { what: "the owned objects to be garbage-collected", timeoutMs: 120_000, intervalMs: 1000 });
  });
});
