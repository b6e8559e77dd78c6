import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { VARIABLES } from "../services/configuration.js";
import { LIMITS, SPEC_SCHEMA, omittedLimit } from "./crd.js";
import { desiredState, memoryBudgetMb, type Environment } from "./desired-state.js";
import type { DocService, KubeObject } from "./types.js";

const profile: Environment["profile"] = {
  measuredAt: "2026-11-21T00:00:00Z",
  method: "unit test",
  components: {
    gateway: { route: "all", requestsPerSecond: 1000, p95TargetMs: 200, cpuPercentAtCapacity: 80 },
    signing: { route: "POST /v1/sign", requestsPerSecond: 50, p95TargetMs: 500, cpuPercentAtCapacity: 90 },
    telemetryAggregator: { route: "usage events", requestsPerSecond: 5000, p95TargetMs: 1000, cpuPercentAtCapacity: 70 },
  },
};

function resource(spec: Partial<DocService["spec"]> = {}): DocService {
  return {
    apiVersion: "docservice.dev/v1alpha1",
    kind: "DocService",
    metadata: { name: "acme", namespace: "prod", uid: "uid-1", generation: 3 },
    spec: {
      image: "registry.example/docservice",
      conversionImage: "registry.example/docservice-conversion",
      version: "1.2.3",
      components: {},
      conversion: { backend: "local" },
      expectedLoad: { sign: 0, convert: 0, collect: 0, auth: 0 },
      autoscaling: { mode: "auto", headroom: 1.3, scaleDownStabilizationSeconds: 300 },
      ...spec,
    },
  };
}

const find = (objects: KubeObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
const kinds = (objects: KubeObject[], name: string) => objects.filter((o) => o.metadata.name === name).map((o) => o.kind).sort();

describe("desired state", () => {
  test("minimal resource: a Deployment, NetworkPolicy and Service per component, a ConfigMap, owner references on everything; no aggregator without Kafka", () => {
    const { objects, components } = desiredState(resource(), { profile, kedaInstalled: false });
    assert.deepEqual(components.map((c) => c.deploymentName), ["acme-gateway", "acme-signing", "acme-keys", "acme-conversion", "acme-telemetry-api"]);
    assert.deepEqual(kinds(objects, "acme-gateway"), ["Deployment", "NetworkPolicy", "Service"]);
    assert.deepEqual(kinds(objects, "acme-telemetry-aggregator"), []);
    assert.ok(find(objects, "ConfigMap", "acme-config"));
    for (const object of objects) {
      assert.equal(object.metadata.namespace, "prod");
      assert.deepEqual(object.metadata.ownerReferences, [
        { apiVersion: "docservice.dev/v1alpha1", kind: "DocService", name: "acme", uid: "uid-1", controller: true, blockOwnerDeletion: true },
      ]);
    }
    const gateway = find(objects, "Deployment", "acme-gateway") as any;
    assert.equal(gateway.spec.replicas, 1);
    assert.equal(gateway.spec.template.spec.containers[0].image, "registry.example/docservice:1.2.3");
    assert.deepEqual(gateway.spec.template.spec.containers[0].args, ["dist/services/main.js", "gateway"]);
    const conversion = find(objects, "Deployment", "acme-conversion") as any;
    assert.equal(conversion.spec.template.spec.containers[0].image, "registry.example/docservice-conversion:1.2.3", "LibreOffice lives in the conversion image");
    const selector = { "app.kubernetes.io/instance": "acme", "app.kubernetes.io/component": "gateway" };
    assert.deepEqual(gateway.spec.selector.matchLabels, selector);
    assert.deepEqual({ ...gateway.spec.template.metadata.labels, ...selector }, gateway.spec.template.metadata.labels);
  });

  test("internal gRPC: bound beyond loopback, mutual TLS from each component's own certificate Secret, the gateway named by its certificate", () => {
    const { objects } = desiredState(resource({ redis: { address: "redis:6379" } }), { profile, kedaInstalled: false });
    const config = (find(objects, "ConfigMap", "acme-config") as any).data;
    assert.equal(config.GRPC_HOST, "0.0.0.0");
    assert.equal(config.GRPC_GATEWAY_NAMES, "acme-gateway");
    assert.ok(!JSON.stringify(objects).includes("DOCSERVICE_INTERNAL_TOKEN"));
    const deployments = objects.filter((o) => o.kind === "Deployment") as any[];
    assert.equal(deployments.length, 5);
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      const env = Object.fromEntries(pod.containers[0].env.map((e: any) => [e.name, e.value]));
      assert.equal(env.GRPC_TLS_CERT_FILE, "/etc/docservice/tls/tls.crt", deployment.metadata.name);
      assert.equal(env.GRPC_TLS_CA_FILE, "/etc/docservice/tls/ca.crt");
      assert.deepEqual(pod.volumes.find((v: any) => v.name === "tls").secret.secretName, `${deployment.metadata.name}-tls`);
    }
    assert.ok(!objects.some((o) => o.kind === "Secret"), "certificates are issued by the reconciler, not part of the desired state");
  });

  test("pods meet Pod Security 'restricted' and run with a read-only root filesystem", () => {
    const { objects } = desiredState(resource({ kafka: { bootstrapServers: ["kafka:9092"], topic: "usage", partitions: 3, replicationFactor: 1, retentionHours: 1, deleteTopicsOnDelete: false } }), { profile, kedaInstalled: false });
    for (const deployment of objects.filter((o) => o.kind === "Deployment") as any[]) {
      const pod = deployment.spec.template.spec;
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(pod.securityContext.seccompProfile.type, "RuntimeDefault");
      const container = pod.containers[0];
      assert.deepEqual(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
      assert.ok(container.volumeMounts.some((m: any) => m.mountPath === "/tmp"), `${deployment.metadata.name}: /tmp is writable`);
    }
  });

  test("NetworkPolicies: the gateway open, each backend's gRPC only from its callers and spec.internalClients", () => {
    const peer = { namespaceSelector: { matchLabels: { team: "billing" } } };
    const { objects } = desiredState(resource({ internalClients: { from: [peer] } }), { profile, kedaInstalled: false });
    const policy = (name: string) => (find(objects, "NetworkPolicy", name) as any).spec;
    const callers = (name: string) => policy(name).ingress[0].from.map((p: any) => p.podSelector?.matchLabels["app.kubernetes.io/component"] ?? p);
    assert.deepEqual(policy("acme-gateway").ingress, [{ ports: [{ port: 8080 }] }]);
    assert.deepEqual(callers("acme-signing"), ["gateway", peer]);
    assert.deepEqual(callers("acme-conversion"), ["gateway", "signing", peer]);
    assert.deepEqual(callers("acme-keys"), ["gateway", "signing", "conversion", "telemetry-api", peer]);
    assert.deepEqual(policy("acme-keys").ingress[0].ports, [{ port: 50051 }]);
    assert.deepEqual(policy("acme-keys").podSelector.matchLabels, { "app.kubernetes.io/instance": "acme", "app.kubernetes.io/component": "keys" });
    assert.deepEqual(policy("acme-conversion").ingress[1], { ports: [{ port: 9464 }] });
  });

  test("backends serve /metrics on a port of their own, named metrics; the gateway on its HTTP port", () => {
    const { objects } = desiredState(resource(), { profile, kedaInstalled: false });
    const container = (name: string) => (find(objects, "Deployment", name) as any).spec.template.spec.containers[0];
    for (const name of ["acme-keys", "acme-signing", "acme-conversion", "acme-telemetry-api"]) {
      assert.deepEqual(container(name).ports, [{ name: "grpc", containerPort: 50051 }, { name: "metrics", containerPort: 9464 }], name);
      assert.deepEqual(container(name).env.filter((e: any) => e.name === "METRICS_PORT"), [{ name: "METRICS_PORT", value: "9464" }], name);
    }
    assert.deepEqual(container("acme-gateway").ports, [{ name: "http", containerPort: 8080 }]);
    assert.equal(container("acme-gateway").env.some((e: any) => e.name === "METRICS_PORT"), false);
  });

  test("/metrics is guarded: every pod gets the instance's metrics token from its Secret, and the aggregator's liveness asks nothing of it", () => {
    const { objects } = desiredState(resource({ kafka: { bootstrapServers: ["kafka:9092"], topic: "usage", partitions: 3, replicationFactor: 1, retentionHours: 1, deleteTopicsOnDelete: false } }), { profile, kedaInstalled: false });
    const deployments = objects.filter((o) => o.kind === "Deployment") as any[];
    assert.equal(deployments.length, 6);
    for (const deployment of deployments) {
      const env = deployment.spec.template.spec.containers[0].env;
      assert.deepEqual(env.filter((e: any) => e.name === "METRICS_TOKEN"), [{ name: "METRICS_TOKEN", valueFrom: { secretKeyRef: { name: "acme-metrics-token", key: "token" } } }], deployment.metadata.name);
    }
    const aggregator = (find(objects, "Deployment", "acme-telemetry-aggregator") as any).spec.template.spec.containers[0];
    assert.deepEqual(aggregator.livenessProbe.httpGet, { path: "/livez", port: "http" });
    assert.equal(objects.some((o) => o.kind === "PodMonitor"), false, "no PodMonitor unless the Prometheus Operator's API is served");
  });

  test("a gateway pod's probes ask only for its own state, never its backends' (/v1/health): a backend down leaves every gateway in its Service", () => {
    const { objects } = desiredState(resource(), { profile, kedaInstalled: false });
    const gateway = (find(objects, "Deployment", "acme-gateway") as any).spec.template.spec.containers[0];
    assert.deepEqual(gateway.readinessProbe.httpGet, { path: "/readyz", port: "http" });
    assert.deepEqual(gateway.livenessProbe.httpGet, { path: "/livez", port: "http" });
    const probed = (objects.filter((o) => o.kind === "Deployment") as any[]).flatMap((d) => [d.spec.template.spec.containers[0].readinessProbe, d.spec.template.spec.containers[0].livenessProbe]);
    assert.equal(JSON.stringify(probed).includes("/v1/health"), false);
    // a pod answering late under load is still serving: the kubelet's 1 s default would take busy pods out of their Service
    for (const probe of probed) assert.equal(probe.timeoutSeconds, 5, JSON.stringify(probe));
    // a backend is ready once it can take work (its own state, on its metrics listener), alive while its gRPC port accepts
    for (const backend of ["signing", "keys", "conversion", "telemetry-api"]) {
      const container = (find(objects, "Deployment", `acme-${backend}`) as any).spec.template.spec.containers[0];
      assert.deepEqual(container.readinessProbe.httpGet, { path: "/readyz", port: "metrics" }, backend);
      assert.ok(container.ports.some((p: any) => p.name === "metrics"), backend);
      assert.deepEqual(container.livenessProbe.tcpSocket, { port: 50051 }, backend);
    }
  });

  test("a PodMonitor per instance where the Prometheus Operator's API is served: its pods only, both metrics ports, the token as bearer", () => {
    const { objects } = desiredState(resource(), { profile, kedaInstalled: false, podMonitor: { interval: "15s", labels: { release: "kps" } } });
    const monitor = find(objects, "PodMonitor", "acme") as any;
    assert.equal(monitor.apiVersion, "monitoring.coreos.com/v1");
    assert.equal(monitor.metadata.namespace, "prod");
    assert.equal(monitor.metadata.labels.release, "kps");
    assert.equal(monitor.metadata.labels["app.kubernetes.io/instance"], "acme");
    assert.equal(monitor.metadata.ownerReferences[0].uid, "uid-1");
    assert.deepEqual(monitor.spec.selector.matchLabels, { "app.kubernetes.io/instance": "acme", "app.kubernetes.io/managed-by": "docservice-operator" });
    assert.deepEqual(monitor.spec.namespaceSelector, { matchNames: ["prod"] });
    const authorization = { type: "Bearer", credentials: { name: "acme-metrics-token", key: "token" } };
    assert.deepEqual(monitor.spec.podMetricsEndpoints, [
      { port: "http", path: "/metrics", interval: "15s", authorization },
      { port: "metrics", path: "/metrics", interval: "15s", authorization },
    ]);
  });

  test("fixed replicas above one get a PodDisruptionBudget and no autoscaler", () => {
    const { objects } = desiredState(resource({ components: { keys: { replicas: 3 } } }), { profile, kedaInstalled: true });
    assert.deepEqual(kinds(objects, "acme-keys"), ["Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service"]);
    assert.equal((find(objects, "Deployment", "acme-keys") as any).spec.replicas, 3);
  });

  test("autoscaled components: HPA floor from expected load ÷ capacity × headroom, CPU target from the profile; no replicas on the Deployment", () => {
    const { objects, components } = desiredState(
      resource({ components: { signing: { autoscaling: { minReplicas: 2, maxReplicas: 20 } } }, expectedLoad: { sign: 200, convert: 0, collect: 0, auth: 0 } }),
      { profile, kedaInstalled: false },
    );
    assert.equal(components.find((c) => c.name === "signing")!.replicas, 6); // ⌈200 / 50 × 1.3⌉
    const hpa = find(objects, "HorizontalPodAutoscaler", "acme-signing") as any;
    assert.equal(hpa.spec.minReplicas, 6);
    assert.equal(hpa.spec.maxReplicas, 20);
    assert.equal(hpa.spec.metrics[0].resource.target.averageUtilization, 69); // 90 / 1.3
    assert.equal(hpa.spec.behavior.scaleUp.policies[1].value, 6, "up to the expected load's replicas in one step");
    assert.equal(hpa.spec.behavior.scaleDown.stabilizationWindowSeconds, 300);
    assert.equal((find(objects, "Deployment", "acme-signing") as any).spec.replicas, undefined);
    assert.ok(find(objects, "PodDisruptionBudget", "acme-signing"));
  });

  test("conversion scales on its demand where the operator serves external metrics, else on CPU", () => {
    const spec = { components: { conversion: { autoscaling: { minReplicas: 1, maxReplicas: 8 }, resources: { requests: { cpu: "1" } } } } };
    const onDemand = find(desiredState(resource(spec), { profile, kedaInstalled: false, conversionDemandServed: true }).objects, "HorizontalPodAutoscaler", "acme-conversion") as any;
    assert.deepEqual(onDemand.spec.metrics, [
      {
        type: "External",
        external: {
          metric: { name: "docservice_conversion_demand", selector: { matchLabels: { "app.kubernetes.io/instance": "acme" } } },
          target: { type: "AverageValue", averageValue: "769m" }, // a pool's worth per pod, less the headroom of 1.3
        },
      },
    ]);
    const onCpu = find(desiredState(resource(spec), { profile, kedaInstalled: false }).objects, "HorizontalPodAutoscaler", "acme-conversion") as any;
    assert.equal(onCpu.spec.metrics[0].type, "Resource");
    const gotenberg = { ...spec, conversion: { backend: "gotenberg" as const, gotenbergUrl: "http://gotenberg:3000" } };
    const onGotenberg = find(desiredState(resource(gotenberg), { profile, kedaInstalled: false, conversionDemandServed: true }).objects, "HorizontalPodAutoscaler", "acme-conversion") as any;
    assert.equal(onGotenberg.spec.metrics[0].type, "Resource", "with Gotenberg, the queue is not the pods'");
    const signing = find(
      desiredState(resource({ components: { signing: { autoscaling: { minReplicas: 1, maxReplicas: 8 } } } }), { profile, kedaInstalled: false, conversionDemandServed: true }).objects,
      "HorizontalPodAutoscaler",
      "acme-signing",
    ) as any;
    assert.equal(signing.spec.metrics[0].type, "Resource", "only conversion has a demand metric");
  });

  test("the aggregator scales on Kafka lag with KEDA when installed, else an HPA; never both", () => {
    const spec = {
      components: { telemetryAggregator: { autoscaling: { minReplicas: 1, maxReplicas: 50 } } },
      kafka: { bootstrapServers: ["kafka:9092"], topic: "usage", partitions: 12, replicationFactor: 3, retentionHours: 168, deleteTopicsOnDelete: false },
      expectedLoad: { sign: 0, convert: 0, collect: 20_000, auth: 0 },
    };
    const withKeda = desiredState(resource(spec), { profile, kedaInstalled: true }).objects;
    assert.deepEqual(kinds(withKeda, "acme-telemetry-aggregator"), ["Deployment", "NetworkPolicy", "PodDisruptionBudget", "ScaledObject"]);
    const scaled = find(withKeda, "ScaledObject", "acme-telemetry-aggregator") as any;
    assert.equal(scaled.spec.minReplicaCount, 6); // ⌈20000 / 5000 × 1.3⌉
    assert.equal(scaled.spec.maxReplicaCount, 12, "no more consumers than partitions");
    assert.equal(scaled.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleUp.policies[1].value, 6);
    // KEDA runs in a namespace of its own: the Service name the DocService's pods resolve in theirs gets its namespace
    assert.deepEqual(scaled.spec.triggers[0].metadata, { bootstrapServers: "kafka.prod.svc:9092", consumerGroup: "acme-usage-aggregator", topic: "usage", lagThreshold: "38461", offsetResetPolicy: "earliest" });
    const elsewhere = ["kafka.streaming:9092", "broker-0.kafka.example.com:9093", "10.0.0.7:9092", "[fd00::7]:9092", "kafka"];
    const named = find(desiredState(resource({ ...spec, kafka: { ...spec.kafka, bootstrapServers: elsewhere } }), { profile, kedaInstalled: true }).objects, "ScaledObject", "acme-telemetry-aggregator") as any;
    assert.equal(named.spec.triggers[0].metadata.bootstrapServers, "kafka.streaming:9092,broker-0.kafka.example.com:9093,10.0.0.7:9092,[fd00::7]:9092,kafka.prod.svc");

    const withoutKeda = desiredState(resource(spec), { profile, kedaInstalled: false }).objects;
    assert.deepEqual(kinds(withoutKeda, "acme-telemetry-aggregator"), ["Deployment", "HorizontalPodAutoscaler", "NetworkPolicy", "PodDisruptionBudget"]);
    const forcedHpa = desiredState(resource({ ...spec, autoscaling: { mode: "hpa", headroom: 1.3, scaleDownStabilizationSeconds: 300 } }), { profile, kedaInstalled: true }).objects;
    assert.ok(!find(forcedHpa, "ScaledObject", "acme-telemetry-aggregator"));
    const config = (find(withKeda, "ConfigMap", "acme-config") as any).data;
    assert.equal(config.TELEMETRY_CONSUMER_GROUP, "acme-usage-aggregator");
    assert.ok(!("TELEMETRY_DEDUPE_WINDOW_SECONDS" in config), "a removed variable stops the pods' start");
  });

  test("config: service addresses and backends in the ConfigMap, secrets only as references", () => {
    const { objects } = desiredState(
      resource({
        redis: { address: "redis:6379", passwordSecret: { name: "redis", key: "password" } },
        hsm: { modulePath: "/usr/lib/softhsm/libsofthsm2.so", tokenLabel: "prod", keyLabel: "signer", pinSecret: { name: "hsm", key: "pin" } },
        signing: { level: "B-LTA", tsaUrl: "http://tsa.example:318/" },
        smtp: { secretName: "smtp" },
        adminTokenSecret: { name: "admin", key: "token" },
        conversion: { backend: "gotenberg", gotenbergUrl: "http://gotenberg:3000" },
      }),
      { profile, kedaInstalled: false },
    );
    const config = (find(objects, "ConfigMap", "acme-config") as any).data;
    assert.equal(config.SIGNING_SERVICE_ADDR, "acme-signing:50051");
    assert.equal(config.SIGNING_LEVEL, "B-LTA");
    assert.equal(config.SIGNING_TSA_URL, "http://tsa.example:318/");
    assert.equal(config.CONVERSION_BACKEND, "gotenberg");
    assert.equal(config.PKCS11_TOKEN_LABEL, "prod");
    assert.ok(!JSON.stringify(config).includes("password"));
    const env = (find(objects, "Deployment", "acme-signing") as any).spec.template.spec.containers[0].env;
    assert.deepEqual(env[0], { name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: { name: "redis", key: "password" } } });
    assert.deepEqual(env[1], { name: "REDIS_URL", value: "redis://:$(REDIS_PASSWORD)@redis:6379" });
    assert.ok(env.some((e: any) => e.name === "PKCS11_PIN" && e.valueFrom.secretKeyRef.name === "hsm"));
    assert.ok(env.some((e: any) => e.name === "SMTP_HOST" && e.valueFrom.secretKeyRef.name === "smtp"));
    assert.ok(env.some((e: any) => e.name === "DOCSERVICE_ADMIN_TOKEN" && e.valueFrom.secretKeyRef.name === "admin"));
  });

  test("spec.limits: the ConfigMap carries exactly the given fields, as their variables; none when omitted", () => {
    const configOf = (spec: Partial<DocService["spec"]>) => (find(desiredState(resource(spec), { profile, kedaInstalled: false }).objects, "ConfigMap", "acme-config") as any).data;
    const plain = configOf({});
    const variables = Object.values(LIMITS).map((field) => field.variable);
    // omitted limits keep the platform's defaults, but for the operator's own: backends' connections end often enough for callers to reach new pods
    assert.deepEqual(
      Object.fromEntries(variables.filter((variable) => variable in plain).map((variable) => [variable, plain[variable]])),
      { GRPC_MAX_CONNECTION_AGE_MS: "15000" },
    );
    assert.equal(configOf({ limits: { grpcMaxConnectionAgeMs: 600_000 } }).GRPC_MAX_CONNECTION_AGE_MS, "600000", "a given value wins");
    assert.deepEqual(configOf({ limits: {} }), plain);

    const limited = configOf({ limits: { requestTimeoutMs: 120_000, maxConnections: 20_000, keepAliveTimeoutMs: 65_000, grpcMaxConcurrentStreams: 256 } });
    const added = Object.fromEntries(Object.entries(limited).filter(([key]) => !(key in plain)));
    assert.deepEqual(added, { HTTP_REQUEST_TIMEOUT_MS: "120000", HTTP_MAX_CONNECTIONS: "20000", HTTP_KEEP_ALIVE_TIMEOUT_MS: "65000", GRPC_MAX_CONCURRENT_STREAMS: "256" });
    assert.deepEqual({ ...limited, ...plain }, limited, "the rest of the ConfigMap is unchanged");

    const every = Object.fromEntries(Object.keys(LIMITS).map((name, i) => [name, i + 1]));
    assert.deepEqual(
      Object.fromEntries(variables.map((variable) => [variable, configOf({ limits: every })[variable]])),
      Object.fromEntries(variables.map((variable, i) => [variable, String(i + 1)])),
    );
  });

  test("spec.limits: each field sets a platform variable, says so with its default, and stays within 1 and a bound Node's timers can hold", () => {
    const properties = SPEC_SCHEMA.properties.limits.properties as Record<string, { type: string; minimum: number; maximum: number; description: string }>;
    assert.deepEqual(Object.keys(properties), Object.keys(LIMITS));
    const platform = Object.values(VARIABLES) as { name: string; default: string | undefined }[];
    for (const [name, field] of Object.entries(LIMITS)) {
      assert.equal(platform.find((variable) => variable.name === field.variable)?.default, field.platformDefault, `${name}: ${field.variable} and its default`);
      const schema = properties[name];
      assert.equal(schema.type, "integer");
      assert.equal(schema.minimum, 1);
      assert.ok(schema.maximum > 1 && schema.maximum < 2 ** 31, `${name}: maximum ${schema.maximum}`);
      assert.match(schema.description, new RegExp(`Sets ${field.variable}; omitted: ${omittedLimit(field)}\\.$`));
    }
    assert.match(properties.grpcMaxConnectionAgeMs!.description, /omitted: 15000\.$/, "the operator's own default, not the platform's");
  });

  test("leaving: each pod drains 5 s, waits for its longest request, and its grace period covers both and the clean-up; an override wins", () => {
    const kafka = { bootstrapServers: ["kafka:9092"], topic: "usage", partitions: 6, replicationFactor: 1, retentionHours: 168, deleteTopicsOnDelete: false };
    const objects = desiredState(resource({ kafka, components: { keys: { shutdownTimeoutSeconds: 300 } } }), { profile, kedaInstalled: false }).objects;
    const leaving = (name: string) => {
      const pod = (find(objects, "Deployment", `acme-${name}`) as any).spec.template.spec;
      const env = Object.fromEntries(pod.containers[0].env.filter((e: { name: string }) => e.name.startsWith("SHUTDOWN_")).map((e: { name: string; value: string }) => [e.name, e.value]));
      return [env.SHUTDOWN_DRAIN_MS, env.SHUTDOWN_TIMEOUT_MS, pod.terminationGracePeriodSeconds];
    };
    // the platform's defaults: a conversion 60 s, a time-stamp 10 s, a document fetch 10 s, each call to a backend 10 s more
    assert.deepEqual(leaving("signing"), ["5000", "80000", 105]);
    assert.deepEqual(leaving("conversion"), ["5000", "80000", 105], "templates fetch images, then convert");
    assert.deepEqual(leaving("gateway"), ["5000", "80000", 105], "the gateway waits on its slowest backend");
    assert.deepEqual(leaving("telemetry-api"), ["5000", "10000", 35]);
    assert.deepEqual(leaving("keys"), ["5000", "300000", 325], "spec.components.keys.shutdownTimeoutSeconds");
    assert.deepEqual(leaving("telemetry-aggregator"), [undefined, undefined, 20], "the aggregator serves nothing: it leaves its group at once");
    for (const variable of ["SHUTDOWN_DRAIN_MS", "SHUTDOWN_TIMEOUT_MS"]) assert.ok(Object.values(VARIABLES).some((v) => v.name === variable), variable);
  });

  test("the gateway drains at least its keep-alive timeout: idle connections time out before it stops accepting", () => {
    const objects = desiredState(resource({ limits: { keepAliveTimeoutMs: 30_000 } }), { profile, kedaInstalled: false }).objects;
    const pod = (name: string) => (find(objects, "Deployment", `acme-${name}`) as any).spec.template.spec;
    const drain = (name: string) => pod(name).containers[0].env.find((e: { name: string }) => e.name === "SHUTDOWN_DRAIN_MS").value;
    assert.equal(drain("gateway"), "30000");
    assert.equal(pod("gateway").terminationGracePeriodSeconds, 130);
    assert.equal(drain("signing"), "5000", "backends serve gRPC, whose connections end with GOAWAY");
  });

  test("memory budget: half of each container's memory limit in MiB (rounded down), from any quantity spelling; absent without a limit", () => {
    const memory = (limit: string | number) => ({ resources: { requests: { memory: "64Mi" }, limits: { cpu: "1", memory: limit } } });
    const { objects } = desiredState(
      resource({
        components: { gateway: memory("512Mi"), signing: memory("1.5Gi"), keys: memory("1G"), conversion: memory(1_073_741_824), telemetryApi: { resources: { requests: { memory: "1Gi" } } } },
      }),
      { profile, kedaInstalled: false },
    );
    const budget = (deployment: string) =>
      (find(objects, "Deployment", deployment) as any).spec.template.spec.containers[0].env.find((e: any) => e.name === "DOCSERVICE_MEMORY_BUDGET_MB")?.value;
    assert.equal(budget("acme-gateway"), "256");
    assert.equal(budget("acme-signing"), "768");
    assert.equal(budget("acme-keys"), "476"); // 10^9 / 2 / 2^20 = 476.8
    assert.equal(budget("acme-conversion"), "512");
    assert.equal(budget("acme-telemetry-api"), undefined, "a request is no limit: the platform decides");
    assert.ok(!("DOCSERVICE_MEMORY_BUDGET_MB" in (find(objects, "ConfigMap", "acme-config") as any).data), "per container, not shared");

    for (const [limit, mb] of [
      ["2Gi", 1024],
      ["1500M", 715],
      ["1e9", 476],
      ["1E9", 476],
      ["1073741824", 512],
      [1e9, 476],
      ["0.5Gi", 256],
      ["4096Ki", 2],
      ["1Ti", 524_288],
      ["3G", 1430],
    ] as const) {
      assert.equal(memoryBudgetMb(limit), mb, String(limit));
    }
    for (const tooSmallOrWrong of ["500k", "1Mi", "0", "-2Gi", "512MB", "Gi", "", "1e99999"]) assert.equal(memoryBudgetMb(tooSmallOrWrong), undefined, tooSmallOrWrong);
  });
});
