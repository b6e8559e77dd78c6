/**
 * What a DocService should look like in the cluster: a pure function from the
 * resource, the sizing profile and whether KEDA is installed to the objects
 * the operator applies. Kept free of I/O so every rule is unit-tested.
 */
import { COMPONENTS, GROUP, KIND, VERSION, type ComponentName } from "./crd.js";
import { componentLoad, cpuTargetPercent, lagThreshold, replicasFor, type SizingProfile } from "./sizing.js";
import type { ComponentSpec, DocService, KubeObject } from "./types.js";

export interface Environment {
  profile: SizingProfile;
  /** KEDA's ScaledObject CRD is installed. */
  kedaInstalled: boolean;
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

/** The service role each component runs (services/main.ts). */
const ROLE: Record<ComponentName, string> = {
  gateway: "gateway",
  signing: "signing",
  keys: "keys",
  conversion: "conversion",
  telemetryApi: "telemetry",
  telemetryAggregator: "aggregator",
};

const kebab = (name: ComponentName) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
export const deploymentName = (resource: string, component: ComponentName) => `${resource}-${kebab(component)}`;
export const configMapName = (resource: string) => `${resource}-config`;
/** The Secret holding DOCSERVICE_INTERNAL_TOKEN, the gateway's identity towards the backends. */
export const internalTokenSecretName = (resource: string) => `${resource}-internal-token`;
export const INTERNAL_TOKEN_KEY = "token";

/**
 * The internal-token Secret with the given value. Created only when absent
 * (see the reconciler), never applied: a new random value on every reconcile
 * would rotate it each time.
 */
export function internalTokenSecret(resource: DocService, token: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: metadata(resource, internalTokenSecretName(resource.metadata.name)),
    type: "Opaque",
    stringData: { [INTERNAL_TOKEN_KEY]: token },
  };
}

export function desiredState(resource: DocService, environment: Environment): DesiredState {
  const { spec } = resource;
  const objects: KubeObject[] = [configMap(resource)];
  const components = COMPONENTS.map((name) => sizeComponent(resource, name, environment));
  for (const component of components) {
    const componentSpec = spec.components[component.name] ?? {};
    objects.push(deployment(resource, component, componentSpec));
    if (component.name !== "telemetryAggregator") objects.push(service(resource, component));
    if (component.replicas > 1 || componentSpec.autoscaling) objects.push(podDisruptionBudget(resource, component));
    if (component.autoscaler === "hpa") objects.push(horizontalPodAutoscaler(resource, component, componentSpec, environment));
    if (component.autoscaler === "keda") objects.push(scaledObject(resource, component, componentSpec, environment));
  }
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
    // reached from the gateway's pod, so not loopback; callers authenticate with DOCSERVICE_INTERNAL_TOKEN
    GRPC_HOST: "0.0.0.0",
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
          TELEMETRY_DEDUPE_WINDOW_SECONDS: String(spec.kafka.dedupeWindowHours * 3600),
        }
      : {}),
    ...(spec.hsm
      ? { SIGNING_KEY_BACKEND: "pkcs11", PKCS11_MODULE: spec.hsm.modulePath, PKCS11_TOKEN_LABEL: spec.hsm.tokenLabel, PKCS11_KEY_LABEL: spec.hsm.keyLabel }
      : {}),
  };
  return { apiVersion: "v1", kind: "ConfigMap", metadata: metadata(resource, configMapName(name)), data };
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
  env.push({ name: "DOCSERVICE_INTERNAL_TOKEN", valueFrom: { secretKeyRef: { name: internalTokenSecretName(resource.metadata.name), key: INTERNAL_TOKEN_KEY } } });
  return env;
}

function deployment(resource: DocService, component: DesiredComponent, componentSpec: ComponentSpec): KubeObject {
  const { spec } = resource;
  const gateway = component.name === "gateway";
  const port = gateway || component.name === "telemetryAggregator" ? { name: "http", containerPort: gateway ? HTTP_PORT : METRICS_PORT } : { name: "grpc", containerPort: GRPC_PORT };
  const probe = gateway
    ? { httpGet: { path: "/v1/health", port: "http" } }
    : component.name === "telemetryAggregator"
      ? { httpGet: { path: "/metrics", port: "http" } }
      : { grpc: { port: GRPC_PORT } };
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
          containers: [
            {
              name: kebab(component.name),
              image: `${spec.image}:${spec.version}`,
              args: ["services/main.ts", ROLE[component.name]],
              ports: [port],
              envFrom: [{ configMapRef: { name: configMapName(resource.metadata.name) } }],
              env: [
                ...secretEnv(resource),
                ...(gateway || component.name === "telemetryAggregator" ? [{ name: "PORT", value: String(port.containerPort) }] : []),
              ],
              readinessProbe: { ...probe, periodSeconds: 5 },
              livenessProbe: { ...probe, periodSeconds: 20, failureThreshold: 6 },
              ...(componentSpec.resources ? { resources: componentSpec.resources } : {}),
              volumeMounts: [{ name: "data", mountPath: "/var/lib/docservice" }],
            },
          ],
          volumes: [{ name: "data", emptyDir: {} }],
        },
      },
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

function horizontalPodAutoscaler(resource: DocService, component: DesiredComponent, componentSpec: ComponentSpec, environment: Environment): KubeObject {
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: metadata(resource, component.deploymentName, component.name),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: component.deploymentName },
      minReplicas: component.replicas,
      maxReplicas: componentSpec.autoscaling!.maxReplicas,
      metrics: [
        {
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
      triggers: [
        {
          type: "kafka",
          metadata: {
            bootstrapServers: kafka.bootstrapServers.join(","),
            consumerGroup: `${resource.metadata.name}-usage-aggregator`,
            topic: kafka.topic,
            lagThreshold: String(lagThreshold(environment.profile.components[component.name], resource.spec.autoscaling.headroom)),
          },
        },
      ],
    },
  };
}
