/**
 * What a DocService should look like in the cluster: a pure function from the
 * resource, the sizing profile and whether KEDA is installed to the objects
 * the operator applies. Kept free of I/O so every rule is unit-tested.
 */
import { CALL_DEADLINES_MS } from "../services/contracts/call-deadlines.js";
import { loadConfig, type Config } from "../services/configuration.js";
import { SHUTDOWN_CLEANUP_MS } from "../services/core/shutdown.js";
import { COMPONENTS, GROUP, KIND, LIMITS, VERSION, operatorDefault, type ComponentName, type LimitName } from "./crd.js";
import { CONVERSION_DEMAND_METRIC } from "./conversion-demand.js";
import { formatQuantity, quantityValue } from "./quantity.js";
import { componentLoad, cpuTargetPercent, lagThreshold, replicasFor, scalingBehavior, type SizingProfile } from "./sizing.js";
import type { ComponentSpec, DocService, KubeObject } from "./types.js";

export interface Environment {
  profile: SizingProfile;
  /** KEDA's ScaledObject CRD is installed. */
  kedaInstalled: boolean;
  /** How Prometheus scrapes the pods, when the Prometheus Operator's PodMonitor is served and the operator writes one per DocService. */
  podMonitor?: PodMonitorSettings;
  /** The operator serves the cluster's external metrics API (operator/external-metrics-api.ts): conversion scales on its demand, not CPU. */
  conversionDemandServed?: boolean;
}

export interface PodMonitorSettings {
  /** How often, e.g. "30s". */
  interval: string;
  /** Labels of the PodMonitor, e.g. what a Prometheus' podMonitorSelector matches. */
  labels: Record<string, string>;
}

export interface DesiredComponent {
  name: ComponentName;
  deploymentName: string;
  /** What the operator asks for: fixed replicas, or the autoscaler's floor computed from the expected load. */
  replicas: number;
  autoscaler: "none" | "hpa" | "keda";
}

export interface DesiredState {
  objects: KubeObject[];
  components: DesiredComponent[];
}

const GRPC_PORT = 50051;
const HTTP_PORT = 8080;
const METRICS_PORT = 9464;
/** How long a probe waits for a pod's answer. */
const PROBE_TIMEOUT_SECONDS = 5;
/** The images' non-root user and group. */
const RUN_AS = 65532;

/** The service role each component runs (services/main.ts). */
const ROLE: Record<ComponentName, string> = {
  gateway: "gateway",
  signing: "signing",
  keys: "keys",
  conversion: "conversion",
  telemetryApi: "telemetry",
  telemetryAggregator: "aggregator",
};

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
export const deploymentName = (resource: string, component: ComponentName) => `${resource}-${kebab(component)}`;
export const configMapName = (resource: string) => `${resource}-config`;
/** The Secret holding the instance's internal CA (ca.crt, ca.key), which signs every component's gRPC certificate. */
export const internalCaSecretName = (resource: string) => `${resource}-internal-ca`;
/** The kubernetes.io/tls Secret of one gRPC identity: a component's, or `client` for internal callers (spec.internalClients). */
export const tlsSecretName = (resource: string, identity: ComponentName | "client") => `${resource}-${kebab(identity)}-tls`;
const TLS_DIRECTORY = "/etc/docservice/tls";
/** The Secret holding the instance's metrics token (key `token`): every pod asks it of /metrics callers, and its PodMonitor sends it. */
export const metricsTokenSecretName = (resource: string) => `${resource}-metrics-token`;

/** Components that serve or call internal gRPC, and so hold a certificate: all but the aggregator (Kafka in, Redis out). */
export const GRPC_COMPONENTS: readonly ComponentName[] = COMPONENTS.filter((name) => name !== "telemetryAggregator");

/** Which components may call each backend's gRPC port (NetworkPolicy): the gateway, and a backend that needs another. */
const CALLERS: Partial<Record<ComponentName, ComponentName[]>> = {
  keys: ["gateway", "signing", "conversion", "telemetryApi"], // API keys of gRPC callers are checked with KeyService
  conversion: ["gateway", "signing"], // signing a DOCX converts it first
  signing: ["gateway"],
  telemetryApi: ["gateway"],
};

/** The components this resource runs: the aggregator only with Kafka (without it, telemetry counts in its own pods). */
export function componentsOf(resource: DocService): ComponentName[] {
  return COMPONENTS.filter((name) => name !== "telemetryAggregator" || resource.spec.kafka !== undefined);
}

/** A kubernetes.io/tls Secret with a certificate issued by the instance's CA. */
export function tlsSecret(resource: DocService, name: string, pem: { certificate: string; privateKey: string; ca: string }): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: metadata(resource, name),
    type: "kubernetes.io/tls",
    data: base64Values({ "tls.crt": pem.certificate, "tls.key": pem.privateKey, "ca.crt": pem.ca }),
  };
}

export function internalCaSecret(resource: DocService, pem: { certificate: string; privateKey: string }): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: metadata(resource, internalCaSecretName(resource.metadata.name)),
    type: "Opaque",
    data: base64Values({ "ca.crt": pem.certificate, "ca.key": pem.privateKey }),
  };
}

export function metricsTokenSecret(resource: DocService, token: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: metadata(resource, metricsTokenSecretName(resource.metadata.name)),
    type: "Opaque",
    data: base64Values({ token }),
  };
}

// data, not stringData: server-side apply tracks the fields it owns, and stringData is never stored
function base64Values(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Buffer.from(value).toString("base64")]));
}

export function desiredState(resource: DocService, environment: Environment): DesiredState {
  const { spec } = resource;
  const config = configMap(resource);
  // the settings every pod reads from that ConfigMap, parsed once
  const platform = loadConfig(config.data as Record<string, string>);
  const objects: KubeObject[] = [config];
  const components = componentsOf(resource).map((name) => sizeComponent(resource, name, environment));
  for (const component of components) {
    const componentSpec = spec.components[component.name] ?? {};
    objects.push(deployment(resource, component, componentSpec, platform));
    objects.push(networkPolicy(resource, component.name));
    if (component.name !== "telemetryAggregator") objects.push(service(resource, component));
    if (component.replicas > 1 || componentSpec.autoscaling) objects.push(podDisruptionBudget(resource, component));
    if (component.autoscaler === "hpa") objects.push(horizontalPodAutoscaler(resource, component, componentSpec, environment));
    if (component.autoscaler === "keda") objects.push(scaledObject(resource, component, componentSpec, environment));
  }
  if (environment.podMonitor) objects.push(podMonitor(resource, environment.podMonitor));
  return { objects, components };
}

function sizeComponent(resource: DocService, name: ComponentName, environment: Environment): DesiredComponent {
  const { spec } = resource;
  const componentSpec = spec.components[name] ?? {};
  const deployment = deploymentName(resource.metadata.name, name);
  if (!componentSpec.autoscaling) {
    return { name, deploymentName: deployment, replicas: componentSpec.replicas ?? 1, autoscaler: "none" };
  }
  const bounds = { min: componentSpec.autoscaling.minReplicas, max: componentSpec.autoscaling.maxReplicas };
  const replicas = replicasFor(componentLoad(name, spec.expectedLoad), environment.profile.components[name], spec.autoscaling.headroom, bounds);
  const keda =
    name === "telemetryAggregator" &&
    spec.kafka !== undefined &&
    (spec.autoscaling.mode === "keda" || (spec.autoscaling.mode === "auto" && environment.kedaInstalled));
  return { name, deploymentName: deployment, replicas, autoscaler: keda ? "keda" : "hpa" };
}

function metadata(resource: DocService, name: string, component?: ComponentName) {
  return {
    name,
    namespace: resource.metadata.namespace,
    labels: labels(resource, component),
    ownerReferences: [
      { apiVersion: `${GROUP}/${VERSION}`, kind: KIND, name: resource.metadata.name, uid: resource.metadata.uid, controller: true, blockOwnerDeletion: true },
    ],
  };
}

function labels(resource: DocService, component?: ComponentName): Record<string, string> {
  return {
    "app.kubernetes.io/name": "docservice",
    "app.kubernetes.io/instance": resource.metadata.name,
    "app.kubernetes.io/managed-by": "docservice-operator",
    ...(component ? { "app.kubernetes.io/component": kebab(component) } : {}),
  };
}

function selector(resource: DocService, component: ComponentName): Record<string, string> {
  return { "app.kubernetes.io/instance": resource.metadata.name, "app.kubernetes.io/component": kebab(component) };
}

/** Non-secret configuration shared by every component (secrets come from Secret references in the pods). */
function configMap(resource: DocService): KubeObject {
  const { spec } = resource;
  const name = resource.metadata.name;
  const address = (component: ComponentName) => `${deploymentName(name, component)}:${GRPC_PORT}`;
  const data: Record<string, string> = {
    HOST: "0.0.0.0",
    // reached from other pods, so not loopback; callers authenticate with their certificates (mutual TLS)
    GRPC_HOST: "0.0.0.0",
    GRPC_GATEWAY_NAMES: deploymentName(name, "gateway"),
    // the root filesystem is read-only: LibreOffice's profile and temp files go to the /tmp emptyDir
    HOME: "/tmp",
    GRPC_PORT: String(GRPC_PORT),
    LOG_LEVEL: "info",
    DOCSERVICE_DATA_DIR: "/var/lib/docservice",
    KEYS_SERVICE_ADDR: address("keys"),
    CONVERSION_SERVICE_ADDR: address("conversion"),
    SIGNING_SERVICE_ADDR: address("signing"),
    TELEMETRY_SERVICE_ADDR: address("telemetryApi"),
    CONVERSION_BACKEND: spec.conversion.backend,
    ...(spec.conversion.gotenbergUrl ? { GOTENBERG_URL: spec.conversion.gotenbergUrl } : {}),
    ...(spec.kafka
      ? {
          KAFKA_BROKERS: spec.kafka.bootstrapServers.join(","),
          TELEMETRY_TOPIC: spec.kafka.topic,
          TELEMETRY_CONSUMER_GROUP: `${name}-usage-aggregator`,
        }
      : {}),
    ...(spec.signing?.level ? { SIGNING_LEVEL: spec.signing.level } : {}),
    ...(spec.signing?.tsaUrl ? { SIGNING_TSA_URL: spec.signing.tsaUrl } : {}),
    ...(spec.hsm
      ? { SIGNING_KEY_BACKEND: "pkcs11", PKCS11_MODULE: spec.hsm.modulePath, PKCS11_TOKEN_LABEL: spec.hsm.tokenLabel, PKCS11_KEY_LABEL: spec.hsm.keyLabel }
      : {}),
    ...limitsEnv(spec.limits ?? {}),
  };
  return { apiVersion: "v1", kind: "ConfigMap", metadata: metadata(resource, configMapName(name)), data };
}

/** spec.limits as their variables; an omitted field is left out, so the platform's default holds, unless the operator has one of its own. */
function limitsEnv(limits: Partial<Record<LimitName, number>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(LIMITS).flatMap(([name, field]) => {
      const value = limits[name as LimitName] ?? operatorDefault(field);
      return value === undefined ? [] : [[field.variable, String(value)]];
    }),
  );
}

const MIB = 2n ** 20n;

/**
 * DOCSERVICE_MEMORY_BUDGET_MB for a container with this memory limit: half of
 * it, in MiB rounded down. Request bodies and the documents made of them may
 * hold that much; the other half is the process itself: V8's heaps, the worker
 * threads, and in the conversion pods the LibreOffice processes. Undefined for
 * a limit that is not a quantity, or whose half is under 1 MiB or past what the
 * variable can hold (the platform then takes half the cgroup limit itself).
 */
export function memoryBudgetMb(memoryLimit: string | number): number | undefined {
  const bytes = quantityValue(memoryLimit);
  if (bytes === undefined) return undefined;
  const budget = bytes / (2n * MIB);
  return budget >= 1n && budget <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(budget) : undefined;
}

function memoryBudgetEnv(componentSpec: ComponentSpec): object[] {
  const limit = componentSpec.resources?.limits?.memory;
  const budget = limit === undefined ? undefined : memoryBudgetMb(limit);
  return budget === undefined ? [] : [{ name: "DOCSERVICE_MEMORY_BUDGET_MB", value: String(budget) }];
}

/** Secret-backed environment: Kubernetes expands $(REDIS_PASSWORD) in REDIS_URL from the variable defined before it. */
function secretEnv(resource: DocService): object[] {
  const { spec } = resource;
  const env: object[] = [];
  if (spec.redis) {
    const scheme = spec.redis.tls ? "rediss" : "redis";
    if (spec.redis.passwordSecret) {
      env.push({ name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: spec.redis.passwordSecret } });
      env.push({ name: "REDIS_URL", value: `${scheme}://:$(REDIS_PASSWORD)@${spec.redis.address}` });
    } else {
      env.push({ name: "REDIS_URL", value: `${scheme}://${spec.redis.address}` });
    }
  }
  if (spec.hsm) env.push({ name: "PKCS11_PIN", valueFrom: { secretKeyRef: spec.hsm.pinSecret } });
  if (spec.adminTokenSecret) env.push({ name: "DOCSERVICE_ADMIN_TOKEN", valueFrom: { secretKeyRef: spec.adminTokenSecret } });
  env.push({ name: "METRICS_TOKEN", valueFrom: { secretKeyRef: { name: metricsTokenSecretName(resource.metadata.name), key: "token" } } });
  if (spec.smtp) {
    for (const [variable, key, optional] of [
      ["SMTP_HOST", "host", false],
      ["SMTP_PORT", "port", false],
      ["SMTP_USER", "user", true],
      ["SMTP_PASSWORD", "password", true],
      ["MAIL_FROM", "from", false],
    ] as const) {
      env.push({ name: variable, valueFrom: { secretKeyRef: { name: spec.smtp.secretName, key, optional } } });
    }
  }
  return env;
}

/** The image a component runs: the conversion image (LibreOffice inside) where LibreOffice converts, the core image elsewhere. */
function imageOf(spec: DocService["spec"], component: ComponentName): string {
  const repository = component === "conversion" && spec.conversion.backend === "local" ? spec.conversionImage : spec.image;
  return `${repository}:${spec.version}`;
}

/**
 * After SIGTERM, how long a serving pod goes on serving, out of rotation
 * (SHUTDOWN_DRAIN_MS): the time kube-proxies and ingress controllers take to
 * drop a terminating pod's endpoint, during which requests still reach it.
 */
const DRAIN_MS = 5000;

/**
 * The longest request a component holds, from the platform's call
 * deadlines with the settings its pods get: a backend's are the calls it
 * serves, the gateway's the longest call it makes to any backend.
 */
function longestRequestMs(component: ComponentName, config: Config): number {
  const deadlines: Record<ComponentName, number[]> = {
    gateway: Object.values(CALL_DEADLINES_MS).map((deadline) => deadline(config)),
    signing: [CALL_DEADLINES_MS.signing(config)],
    keys: [CALL_DEADLINES_MS.keys(config)],
    conversion: [CALL_DEADLINES_MS.conversion(config), CALL_DEADLINES_MS.annotation(config)],
    telemetryApi: [CALL_DEADLINES_MS.telemetry(config)],
    telemetryAggregator: [],
  };
  return Math.max(0, ...deadlines[component]);
}

/**
 * How a pod of the component leaves: its drain and its wait for requests in
 * flight as the process's settings, and a termination grace period that
 * covers both and the clean-up after them (the telemetry spool's hand-over
 * to Kafka among it), so the kubelet's SIGKILL never cuts a request short.
 */
function shutdownOf(component: ComponentName, componentSpec: ComponentSpec, platform: Config) {
  if (component === "telemetryAggregator") return { env: [], gracePeriodSeconds: Math.ceil(SHUTDOWN_CLEANUP_MS / 1000) };
  const timeoutMs = componentSpec.shutdownTimeoutSeconds ? componentSpec.shutdownTimeoutSeconds * 1000 : longestRequestMs(component, platform);
  // the gateway's idle keep-alive connections must time out within the drain: closing one as a client reuses it resets the request
  const drainMs = component === "gateway" ? Math.max(DRAIN_MS, platform.keepAliveTimeoutMs) : DRAIN_MS;
  return {
    env: [
      { name: "SHUTDOWN_DRAIN_MS", value: String(drainMs) },
      { name: "SHUTDOWN_TIMEOUT_MS", value: String(timeoutMs) },
    ],
    gracePeriodSeconds: Math.ceil((drainMs + timeoutMs + SHUTDOWN_CLEANUP_MS) / 1000),
  };
}

function deployment(resource: DocService, component: DesiredComponent, componentSpec: ComponentSpec, platform: Config): KubeObject {
  const { spec } = resource;
  const shutdown = shutdownOf(component.name, componentSpec, platform);
  const gateway = component.name === "gateway";
  const grpc = GRPC_COMPONENTS.includes(component.name);
  const backend = grpc && !gateway;
  const port = gateway || component.name === "telemetryAggregator" ? { name: "http", containerPort: gateway ? HTTP_PORT : METRICS_PORT } : { name: "grpc", containerPort: GRPC_PORT };
  const aggregator = component.name === "telemetryAggregator";
  const liveness =
    gateway || aggregator
      ? { httpGet: { path: "/livez", port: "http" } }
      : // the kubelet's gRPC probe cannot present a client certificate: a TCP check
        { tcpSocket: { port: GRPC_PORT } };
  // Readiness is a pod's own state, never that of what every pod of a component shares (Redis, Kafka, the
  // backends behind the gateway): a shared dependency down would take every pod out of its Service at once, and
  // clients would be refused instead of answered (/v1/health, which reports the backends, is for people). The
  // gateway is ready until it leaves; a backend once it can take work (a conversion pod's LibreOffice pool started);
  // the aggregator once in its consumer group with its store answering, and it takes no requests.
  const readiness = gateway
    ? { httpGet: { path: "/readyz", port: "http" } }
    : aggregator
      ? { httpGet: { path: "/health", port: "http" } }
      : { httpGet: { path: "/readyz", port: "metrics" } };
  const tlsEnv = grpc
    ? [
        { name: "GRPC_TLS_CERT_FILE", value: `${TLS_DIRECTORY}/tls.crt` },
        { name: "GRPC_TLS_KEY_FILE", value: `${TLS_DIRECTORY}/tls.key` },
        { name: "GRPC_TLS_CA_FILE", value: `${TLS_DIRECTORY}/ca.crt` },
      ]
    : [];
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: metadata(resource, component.deploymentName, component.name),
    spec: {
      // Left out when autoscaled: the HPA or KEDA owns the replica count.
      ...(component.autoscaler === "none" ? { replicas: component.replicas } : {}),
      selector: { matchLabels: selector(resource, component.name) },
      template: {
        metadata: { labels: labels(resource, component.name) },
        spec: {
          // Pod Security Standards "restricted"
          securityContext: { runAsNonRoot: true, runAsUser: RUN_AS, runAsGroup: RUN_AS, fsGroup: RUN_AS, seccompProfile: { type: "RuntimeDefault" } },
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: shutdown.gracePeriodSeconds,
          containers: [
            {
              name: kebab(component.name),
              image: imageOf(spec, component.name),
              // the image's entrypoint is tini → node: tini reaps LibreOffice's orphans as PID 1
              args: ["dist/services/main.js", ROLE[component.name]],
              // a backend serves /metrics (its saturation: conversions waiting, …) beside its gRPC port
              ports: backend ? [port, { name: "metrics", containerPort: METRICS_PORT }] : [port],
              envFrom: [{ configMapRef: { name: configMapName(resource.metadata.name) } }],
              env: [
                ...secretEnv(resource),
                ...tlsEnv,
                ...memoryBudgetEnv(componentSpec),
                ...shutdown.env,
                ...(gateway || component.name === "telemetryAggregator" ? [{ name: "PORT", value: String(port.containerPort) }] : []),
                ...(backend ? [{ name: "METRICS_PORT", value: String(METRICS_PORT) }] : []),
              ],
              // A pod busy at its capacity answers its probes late but still serves: with the kubelet's 1 s timeout, every pod of a
              // component could leave its Service at once under a surge, and clients would be refused instead of answered late
              readinessProbe: { ...readiness, periodSeconds: 5, timeoutSeconds: PROBE_TIMEOUT_SECONDS },
              livenessProbe: { ...liveness, periodSeconds: 20, timeoutSeconds: PROBE_TIMEOUT_SECONDS, failureThreshold: 6 },
              ...(componentSpec.resources ? { resources: componentSpec.resources } : {}),
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
              volumeMounts: [
                { name: "data", mountPath: "/var/lib/docservice" },
                { name: "tmp", mountPath: "/tmp" },
                ...(grpc ? [{ name: "tls", mountPath: TLS_DIRECTORY, readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            { name: "data", emptyDir: {} },
            { name: "tmp", emptyDir: {} },
            ...(grpc ? [{ name: "tls", secret: { secretName: tlsSecretName(resource.metadata.name, component.name), defaultMode: 0o440 } }] : []),
          ],
        },
      },
    },
  };
}

/**
 * Who may open a connection to a component's pods. The gateway takes HTTP
 * from anywhere; a backend's gRPC port only from the components that call it
 * and from spec.internalClients, its /metrics from anywhere (Prometheus, an
 * autoscaler's scraper); the aggregator only serves /metrics.
 */
function networkPolicy(resource: DocService, component: ComponentName): KubeObject {
  const from = (names: ComponentName[]) => names.map((name) => ({ podSelector: { matchLabels: selector(resource, name) } }));
  const ingress =
    component === "gateway"
      ? [{ ports: [{ port: HTTP_PORT }] }]
      : component === "telemetryAggregator"
        ? [{ ports: [{ port: METRICS_PORT }] }]
        : [
            { from: [...from(CALLERS[component] ?? []), ...(resource.spec.internalClients?.from ?? [])], ports: [{ port: GRPC_PORT }] },
            { ports: [{ port: METRICS_PORT }] },
          ];
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: metadata(resource, deploymentName(resource.metadata.name, component), component),
    spec: { podSelector: { matchLabels: selector(resource, component) }, policyTypes: ["Ingress"], ingress },
  };
}

/**
 * /metrics of every pod of the instance for the Prometheus Operator: the
 * gateway's and the aggregator's on "http", the backends' on "metrics", with
 * the instance's metrics token, which /metrics asks of other machines.
 */
function podMonitor(resource: DocService, settings: PodMonitorSettings): KubeObject {
  const authorization = { type: "Bearer", credentials: { name: metricsTokenSecretName(resource.metadata.name), key: "token" } };
  const { name, namespace } = resource.metadata;
  const base = metadata(resource, name);
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PodMonitor",
    metadata: { ...base, labels: { ...settings.labels, ...base.labels } },
    spec: {
      selector: { matchLabels: { "app.kubernetes.io/instance": name, "app.kubernetes.io/managed-by": "docservice-operator" } },
      namespaceSelector: { matchNames: [namespace] },
      podMetricsEndpoints: ["http", "metrics"].map((port) => ({ port, path: "/metrics", interval: settings.interval, authorization })),
    },
  };
}

function service(resource: DocService, component: DesiredComponent): KubeObject {
  const gateway = component.name === "gateway";
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: metadata(resource, component.deploymentName, component.name),
    spec: {
      selector: selector(resource, component.name),
      ports: [gateway ? { name: "http", port: 80, targetPort: "http" } : { name: "grpc", port: GRPC_PORT, targetPort: "grpc", appProtocol: "grpc" }],
    },
  };
}

function podDisruptionBudget(resource: DocService, component: DesiredComponent): KubeObject {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: metadata(resource, component.deploymentName, component.name),
    spec: { maxUnavailable: 1, selector: { matchLabels: selector(resource, component.name) } },
  };
}

function behavior(resource: DocService, component: DesiredComponent) {
  const { headroom, scaleDownStabilizationSeconds } = resource.spec.autoscaling;
  return scalingBehavior(component.replicas, headroom, scaleDownStabilizationSeconds);
}

function horizontalPodAutoscaler(resource: DocService, component: DesiredComponent, componentSpec: ComponentSpec, environment: Environment): KubeObject {
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: metadata(resource, component.deploymentName, component.name),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: component.deploymentName },
      minReplicas: component.replicas,
      maxReplicas: componentSpec.autoscaling!.maxReplicas,
      behavior: behavior(resource, component),
      metrics: [
        // with Gotenberg the work (and so the queue) is Gotenberg's, not the conversion pods'
        component.name === "conversion" && environment.conversionDemandServed && resource.spec.conversion.backend === "local"
          ? {
              // pods' worth of conversions in flight or waiting; each pod aims at a pool's worth less the headroom
              type: "External",
              external: {
                metric: { name: CONVERSION_DEMAND_METRIC, selector: { matchLabels: { "app.kubernetes.io/instance": resource.metadata.name } } },
                target: { type: "AverageValue", averageValue: formatQuantity(1 / resource.spec.autoscaling.headroom) },
              },
            }
          : {
              type: "Resource",
              resource: {
                name: "cpu",
                target: { type: "Utilization", averageUtilization: cpuTargetPercent(environment.profile.components[component.name], resource.spec.autoscaling.headroom) },
              },
            },
      ],
    },
  };
}

/**
 * A Kafka address as KEDA's operator, in a namespace of its own, must name it:
 * a bare Service name ("kafka:9092"), which the DocService's pods resolve in
 * their namespace, gets that namespace ("kafka.<namespace>.svc:9092"). A name
 * with a dot (another namespace's Service, a host elsewhere) or an IP address
 * is kept as it is.
 */
function inNamespace(server: string, namespace: string): string {
  const [, host, port] = /^([^:[\]]+)(:\d+)?$/.exec(server) ?? [];
  return host && !host.includes(".") ? `${host}.${namespace}.svc${port ?? ""}` : server;
}

function scaledObject(resource: DocService, component: DesiredComponent, componentSpec: ComponentSpec, environment: Environment): KubeObject {
  const kafka = resource.spec.kafka!;
  return {
    apiVersion: "keda.sh/v1alpha1",
    kind: "ScaledObject",
    metadata: metadata(resource, component.deploymentName, component.name),
    spec: {
      scaleTargetRef: { name: component.deploymentName },
      minReplicaCount: component.replicas,
      // More consumers than partitions would sit idle.
      maxReplicaCount: Math.min(componentSpec.autoscaling!.maxReplicas, kafka.partitions),
      advanced: { horizontalPodAutoscalerConfig: { behavior: behavior(resource, component) } },
      triggers: [
        {
          type: "kafka",
          metadata: {
            bootstrapServers: kafka.bootstrapServers.map((server) => inNamespace(server, resource.metadata.namespace)).join(","),
            consumerGroup: `${resource.metadata.name}-usage-aggregator`,
            topic: kafka.topic,
            lagThreshold: String(lagThreshold(environment.profile.components[component.name], resource.spec.autoscaling.headroom)),
            // as the aggregator reads a partition its group has no offset for: from the start, so all of it is lag (with KEDA's
            // default, latest, every such partition, even an empty one, would count 1 and the lag would never fall to 0)
            offsetResetPolicy: "earliest",
          },
        },
      ],
    },
  };
}
