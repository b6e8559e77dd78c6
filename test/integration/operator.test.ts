// The DocService operator against a real kube-apiserver + etcd (no
// controllers: Deployments get no Pods, so readiness is written into their
// status by the test) and a real Kafka for the usage topic.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AppsV1Api, CoordinationV1Api, KubeConfig } from "@kubernetes/client-node";
import { Kafka, logLevel } from "kafkajs";
import { CRD } from "../../operator/crd.js";
import { CRD_FILE } from "../../operator/crd-yaml.js";
import type { SizingProfile } from "../../operator/sizing.js";
import { VERSION } from "../../services/core/version.js";
import { compiled } from "../support/compiled-platform.js";
import { startKafka, type KafkaBroker } from "../support/kafka.js";
import { kedaCrdsFile, kubectl, prometheusOperatorCrdsFile, startKubeApiServer, waitForCrds, type KubeApiServer } from "../support/kube.js";
import { waitFor } from "../support/wait.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const PROFILE: SizingProfile = {
  measuredAt: "2026-11-21T00:00:00Z",
  method: "fixed figures for the operator test (the real profile is loadtest/sizing-profile.json)",
  components: {
    signing: { route: "POST /v1/sign", requestsPerSecond: 50, p95TargetMs: 500, cpuPercentAtCapacity: 90 },
    telemetryAggregator: { route: "usage events", requestsPerSecond: 5000, p95TargetMs: 1000, cpuPercentAtCapacity: 70 },
  },
};

interface Operator {
  process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

describe("DocService operator", () => {
  let kube: KubeApiServer;
  let kafka: KafkaBroker;
  let dir: string;
  let apps: AppsV1Api;
  let coordination: CoordinationV1Api;
  const operators: Operator[] = [];

  function startOperator(identity: string): Operator {
    let output = "";
    const child = spawn(process.execPath, [compiled("operator/main.js")], {
      cwd: ROOT,
      env: { ...process.env, KUBECONFIG: kube.kubeconfigPath, SIZING_PROFILE: join(dir, "profile.json"), POD_NAME: identity, RESYNC_SECONDS: "2" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const operator = {
      process: child,
      output: () => output,
      stop: async () => {
        if (child.exitCode === null) child.kill("SIGTERM");
        await exited;
      },
    };
    operators.push(operator);
    return operator;
  }

  const apply = (manifest: object) => kubectl(kube, ["apply", "-f", "-"], { input: JSON.stringify(manifest) });
  const get = async (kind: string, name: string, namespace = "default"): Promise<any> => {
    const output = await kubectl(kube, ["get", kind, name, "-n", namespace, "-o", "json", "--ignore-not-found"]);
    return output.trim() ? JSON.parse(output) : undefined;
  };
  // generous: the operator and the API server share the machine with two other test files
  const until = (what: string, check: () => Promise<boolean>, timeoutMs = 120_000) => waitFor(check, { what, timeoutMs, intervalMs: 200 });
  /** The minimal example's components: no aggregator without Kafka. */
  const COMPONENTS = ["gateway", "signing", "keys", "conversion", "telemetry-api"];
  const secretText = (secret: any, key: string) => Buffer.from(secret.data[key], "base64").toString();
  const condition = (resource: any, type: string) => resource?.status?.conditions?.find((c: any) => c.type === type);

  /** What a Deployment controller would write once the Pods are up. */
  async function markReady(name: string, namespace = "default"): Promise<void> {
    const deployment = await apps.readNamespacedDeployment({ name, namespace });
    const replicas = deployment.spec?.replicas ?? 1;
    deployment.status = { replicas, readyReplicas: replicas, availableReplicas: replicas, updatedReplicas: replicas, observedGeneration: deployment.metadata?.generation };
    await apps.replaceNamespacedDeploymentStatus({ name, namespace, body: deployment });
  }

  before(async () => {
    [kube, kafka] = await Promise.all([startKubeApiServer(), startKafka()]);
    dir = mkdtempSync(join(tmpdir(), "docservice-operator-"));
    writeFileSync(join(dir, "profile.json"), JSON.stringify(PROFILE));
    const config = new KubeConfig();
    config.loadFromFile(kube.kubeconfigPath);
    apps = config.makeApiClient(AppsV1Api);
    coordination = config.makeApiClient(CoordinationV1Api);
    // The chart's file, as users install it (test/integration/chart-crd.test.ts checks it rule by rule).
    await kubectl(kube, ["apply", "--server-side", "-f", CRD_FILE]);
    // the Prometheus Operator's API too, so that the operator writes a PodMonitor per DocService
    await kubectl(kube, ["apply", "--server-side", "-f", prometheusOperatorCrdsFile()]);
    await waitForCrds(kube, [CRD.metadata.name, "podmonitors.monitoring.coreos.com"]);
    startOperator("operator-a");
  });

  after(async () => {
    await Promise.all(operators.map((o) => o.stop()));
    await Promise.allSettled([kube?.stop(), kafka?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("the minimal example becomes a Deployment and Service per component, a ConfigMap, owned by the resource", async () => {
    await kubectl(kube, ["apply", "-f", join(ROOT, "operator/examples/minimal.yaml")]);
    const resource = await get("docservice", "docservice");
    // certificates and the metrics token are written before the objects that mount them
    const children = async () =>
      Promise.all(COMPONENTS.flatMap((component) => ["deployment", "service", "networkpolicy"].map((kind) => get(kind, `docservice-${component}`))));
    await until("the children", async () => (await children()).every((child) => child !== undefined));
    for (const component of COMPONENTS) {
      const deployment = await get("deployment", `docservice-${component}`);
      assert.ok(deployment, component);
      assert.deepEqual(deployment.metadata.ownerReferences.map((o: any) => [o.kind, o.uid, o.controller]), [["DocService", resource.metadata.uid, true]]);
      const image = component === "conversion" ? `docservice/docservice-conversion:${VERSION}` : `docservice/docservice:${VERSION}`;
      assert.equal(deployment.spec.template.spec.containers[0].image, image);
      assert.ok(await get("service", `docservice-${component}`), `service ${component}`);
      assert.ok(await get("networkpolicy", `docservice-${component}`), `network policy ${component}`);
    }
    assert.equal(await get("deployment", "docservice-telemetry-aggregator"), undefined, "no aggregator without Kafka");
    const config = await get("configmap", "docservice-config");
    assert.equal(config.data.SIGNING_SERVICE_ADDR, "docservice-signing:50051");
    assert.equal(config.data.GRPC_HOST, "0.0.0.0");
    const ca = await get("secret", "docservice-internal-ca");
    assert.ok(ca, "the internal CA's Secret");
    assert.deepEqual(ca.metadata.ownerReferences.map((o: any) => [o.kind, o.uid, o.controller]), [["DocService", resource.metadata.uid, true]]);
    const keysTls = await get("secret", "docservice-keys-tls");
    assert.equal(keysTls.type, "kubernetes.io/tls");
    const certificate = new X509Certificate(secretText(keysTls, "tls.crt"));
    assert.ok(certificate.checkIssued(new X509Certificate(secretText(ca, "ca.crt"))), "issued by the instance's CA");
    assert.equal(certificate.subjectAltName, "DNS:docservice-keys, DNS:docservice-keys.default, DNS:docservice-keys.default.svc, DNS:docservice-keys.default.svc.cluster.local");
    assert.equal(secretText(keysTls, "ca.crt"), secretText(ca, "ca.crt"));
    const metricsToken = await get("secret", "docservice-metrics-token");
    assert.match(secretText(metricsToken, "token"), /^[\w-]{43}$/, "32 random bytes, base64url");
    assert.deepEqual(metricsToken.metadata.ownerReferences.map((o: any) => o.uid), [resource.metadata.uid]);
    await until("the PodMonitor", async () => (await get("podmonitor", "docservice")) !== undefined);
    const monitor = await get("podmonitor", "docservice");
    assert.deepEqual(
      monitor.spec.podMetricsEndpoints.map((e: any) => [e.port, e.authorization.credentials.name]),
      [["http", "docservice-metrics-token"], ["metrics", "docservice-metrics-token"]],
    );
    await until("Progressing status", async () => {
      const current = await get("docservice", "docservice");
      return condition(current, "Progressing")?.status === "True" && current.status.observedGeneration === current.metadata.generation;
    });
    const current = await get("docservice", "docservice");
    assert.equal(condition(current, "Ready").status, "False");
    assert.equal(condition(current, "Degraded").status, "False");
    assert.match(current.status.summary, /gateway 0\/1/);
  });

  test("components becoming ready make the resource Ready; an unchanged resource then costs no writes", async () => {
    for (const component of COMPONENTS) await markReady(`docservice-${component}`);
    await until("Ready", async () => condition(await get("docservice", "docservice"), "Ready")?.status === "True");
    const versions = async () => {
      const kinds = ["docservice/docservice", "deployment/docservice-gateway", "service/docservice-keys", "configmap/docservice-config", "secret/docservice-internal-ca", "secret/docservice-gateway-tls", "secret/docservice-metrics-token", "podmonitor/docservice"];
      return Promise.all(kinds.map(async (k) => (await get(k.split("/")[0], k.split("/")[1])).metadata.resourceVersion));
    };
    const before = await versions();
    await sleep(5000); // two resyncs (RESYNC_SECONDS=2)
    assert.deepEqual(await versions(), before);
    assert.match(operators[0].output(), /leading: reconciling/);
  });

  test("a spec change updates the children; a deleted child is recreated; certificates are not re-issued while current", async () => {
    const certificate = secretText(await get("secret", "docservice-gateway-tls"), "tls.crt");
    await kubectl(kube, ["patch", "docservice", "docservice", "--type=merge", "-p", JSON.stringify({ spec: { components: { keys: { replicas: 3 } } } })]);
    await until("keys scaled to 3", async () => (await get("deployment", "docservice-keys"))?.spec.replicas === 3);
    assert.ok(await get("poddisruptionbudget", "docservice-keys"), "a PDB once there is more than one replica");
    await kubectl(kube, ["delete", "service", "docservice-gateway"]);
    await until("the gateway Service back", async () => (await get("service", "docservice-gateway")) !== undefined);
    await sleep(2500); // a resync (RESYNC_SECONDS=2) after the change
    assert.equal(secretText(await get("secret", "docservice-gateway-tls"), "tls.crt"), certificate, "the same certificate after reconciles and resyncs");
    await kubectl(kube, ["delete", "secret", "docservice-signing-tls"]);
    await until("the signing certificate re-issued", async () => (await get("secret", "docservice-signing-tls")) !== undefined);
  });

  test("invalid specs are rejected by the API server with the schema's or the CEL rule's message", async () => {
    const invalid = async (spec: object) => {
      const error = await apply({ apiVersion: "docservice.dev/v1alpha1", kind: "DocService", metadata: { name: "invalid" }, spec }).then(
        () => assert.fail("accepted"),
        (e: Error) => e.message,
      );
      return error;
    };
    assert.match(await invalid({}), /spec.version: Required value/);
    assert.match(await invalid({ version: "1", conversion: { backend: "gotenberg" } }), /gotenbergUrl is required when backend is gotenberg/);
    assert.match(await invalid({ version: "1", components: { signing: { autoscaling: { minReplicas: 5, maxReplicas: 2 } } } }), /minReplicas must not exceed maxReplicas/);
    assert.match(await invalid({ version: "1", conversion: { backend: "word" } }), /Unsupported value: "word"/);
  });

  test("a missing Secret makes the resource Degraded with a message naming it", async () => {
    await apply({
      apiVersion: "docservice.dev/v1alpha1",
      kind: "DocService",
      metadata: { name: "needs-secrets" },
      spec: { version: "1", smtp: { secretName: "smtp-credentials" } },
    });
    await until("Degraded", async () => condition(await get("docservice", "needs-secrets"), "Degraded")?.status === "True");
    assert.match(condition(await get("docservice", "needs-secrets"), "Degraded").message, /Secret smtp-credentials named by spec.smtp.secretName does not exist/);
    await apply({ apiVersion: "v1", kind: "Secret", metadata: { name: "smtp-credentials" }, stringData: { host: "mail", port: "587", from: "a@b.c" } });
    await until("no longer Degraded", async () => condition(await get("docservice", "needs-secrets"), "Degraded")?.status === "False");
  });

  test("the production example is accepted as it is; without its Secrets and brokers it is Degraded, naming each", async () => {
    await kubectl(kube, ["create", "namespace", "prod"]);
    await kubectl(kube, ["apply", "-n", "prod", "-f", join(ROOT, "operator/examples/production.yaml")]);
    await until("Degraded", async () => condition(await get("docservice", "docservice", "prod"), "Degraded")?.status === "True", 60_000);
    const message = condition(await get("docservice", "docservice", "prod"), "Degraded").message;
    for (const secret of ["docservice-redis", "docservice-hsm", "docservice-smtp", "docservice-admin"]) assert.match(message, new RegExp(`Secret ${secret}`));
    const hpa = await get("horizontalpodautoscaler", "docservice-gateway", "prod");
    assert.equal(hpa.spec.maxReplicas, 20);
    const config = await get("configmap", "docservice-config", "prod");
    assert.equal(config.data.SIGNING_KEY_BACKEND, "pkcs11");
    assert.equal(config.data.GOTENBERG_URL, "http://gotenberg:3000");
  });

  test("with Kafka and KEDA: autoscaling from the sizing profile, the topic kept as specified, deleted with the resource when asked", async () => {
    await kubectl(kube, ["apply", "--server-side", "-f", kedaCrdsFile()]);
    const spec = {
      version: "1",
      components: {
        signing: { autoscaling: { minReplicas: 1, maxReplicas: 10 }, resources: { requests: { cpu: "1" } } },
        telemetryAggregator: { autoscaling: { minReplicas: 1, maxReplicas: 20 }, resources: { requests: { cpu: "500m" } } },
      },
      kafka: { bootstrapServers: kafka.brokers, topic: "ops-usage", partitions: 3, replicationFactor: 1, retentionHours: 24, deleteTopicsOnDelete: true },
      expectedLoad: { sign: 100, collect: 10_000 },
      autoscaling: { mode: "auto", headroom: 1.3, scaleDownStabilizationSeconds: 120 },
    };
    await apply({ apiVersion: "docservice.dev/v1alpha1", kind: "DocService", metadata: { name: "scaled" }, spec });
    await until("the ScaledObject", async () => (await get("scaledobject", "scaled-telemetry-aggregator")) !== undefined);
    const scaled = await get("scaledobject", "scaled-telemetry-aggregator");
    assert.equal(scaled.spec.minReplicaCount, 3); // ⌈10000 / 5000 × 1.3⌉
    assert.equal(scaled.spec.maxReplicaCount, 3, "no more consumers than partitions");
    assert.equal(await get("horizontalpodautoscaler", "scaled-telemetry-aggregator"), undefined, "never both on one Deployment");
    const hpa = await get("horizontalpodautoscaler", "scaled-signing");
    assert.equal(hpa.spec.minReplicas, 3); // ⌈100 / 50 × 1.3⌉
    assert.equal(hpa.spec.metrics[0].resource.target.averageUtilization, 69);
    // stored as written: the API server accepted every field, in the HPA and in KEDA's schema alike
    assert.deepEqual(hpa.spec.behavior.scaleDown, {
      stabilizationWindowSeconds: 120,
      selectPolicy: "Max",
      policies: [{ type: "Percent", value: 23, periodSeconds: 60 }, { type: "Pods", value: 1, periodSeconds: 60 }],
    });
    assert.deepEqual(hpa.spec.behavior.scaleUp.policies, [{ type: "Percent", value: 100, periodSeconds: 15 }, { type: "Pods", value: 4, periodSeconds: 15 }]);
    assert.equal(scaled.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds, 120);
    assert.equal((await get("deployment", "scaled-signing")).spec.replicas, 1, "the replica count is left to the HPA (API default)");
    assert.deepEqual((await get("docservice", "scaled")).metadata.finalizers, ["docservice.dev/kafka-topic"]);

    const admin = new Kafka({ brokers: kafka.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const partitions = async () => (await admin.fetchTopicMetadata({ topics: ["ops-usage"] })).topics[0].partitions.length;
      await until("the topic", async () => (await admin.listTopics()).includes("ops-usage"));
      assert.equal(await partitions(), 3);
      await kubectl(kube, ["patch", "docservice", "scaled", "--type=merge", "-p", JSON.stringify({ spec: { kafka: { partitions: 5 } } })]);
      await until("5 partitions", async () => (await partitions()) === 5);
      await kubectl(kube, ["delete", "docservice", "scaled", "--wait=true", "--timeout=30s"]);
      assert.ok(!(await admin.listTopics()).includes("ops-usage"), "the topic is deleted with the resource");
    } finally {
      await admin.disconnect();
    }
  });

  test("two operators: one leads; when it stops, the other takes over", async () => {
    const second = startOperator("operator-b");
    await sleep(3000);
    const lease = await coordination.readNamespacedLease({ name: "docservice-operator", namespace: "default" });
    assert.equal(lease.spec?.holderIdentity, "operator-a");
    assert.doesNotMatch(second.output(), /leading: reconciling/);
    await operators[0].stop();
    await until("operator-b leads", async () => (await coordination.readNamespacedLease({ name: "docservice-operator", namespace: "default" })).spec?.holderIdentity === "operator-b");
    await apply({ apiVersion: "docservice.dev/v1alpha1", kind: "DocService", metadata: { name: "after-failover" }, spec: { version: "2" } });
    await until("the new leader reconciles", async () => (await get("deployment", "after-failover-gateway")) !== undefined);
  });
});
