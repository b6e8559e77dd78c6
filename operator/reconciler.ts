/**
 * One reconcile of one DocService: from what is (the resource, its children,
 * the topic) to what should be, level-triggered and idempotent. Children are
 * applied with server-side apply only when their desired configuration
 * changed (a hash annotation records what was applied), and the status is
 * written only when it changed, so an unchanged resource costs no writes.
 */
import { createHash, randomBytes } from "node:crypto";
import stringify from "safe-stable-stringify";
import {
  componentsOf,
  deploymentName,
  desiredState,
  GRPC_COMPONENTS,
  internalCaSecret,
  internalCaSecretName,
  metricsTokenSecret,
  metricsTokenSecretName,
  tlsSecret,
  tlsSecretName,
  type DesiredComponent,
  type PodMonitorSettings,
} from "./desired-state.js";
import { GROUP_VERSION as EXTERNAL_METRICS_GROUP_VERSION } from "./external-metrics-api.js";
import { createCa, issueLeaf, leafIsCurrent, serviceDnsNames, type KeyPairPem } from "./internal-pki.js";
import { deleteTopic, ensureTopic } from "./kafka-topics.js";
import { FIELD_MANAGER, type KubeApi } from "./kube-api.js";
import { writerWaits, type DeploymentState } from "./rollout-order.js";
import type { SizingProfile } from "./sizing.js";
import type { Condition, DocService, DocServiceStatus, KubeObject } from "./types.js";

export const TOPIC_FINALIZER = "docservice.dev/kafka-topic";
export const HASH_ANNOTATION = "docservice.dev/applied-hash";

export interface ReconcilerDeps {
  api: KubeApi;
  profile: SizingProfile;
  /** Set when the operator writes a PodMonitor per DocService (where the Prometheus Operator's API is served). */
  podMonitor?: PodMonitorSettings;
  /** The Service ("namespace/name") of the operator's external metrics API, when it serves one. */
  externalMetricsService?: string;
  log(message: string, fields?: object): void;
}

interface LiveDeployment {
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; replicas?: number };
}

export class Reconciler {
  constructor(private readonly deps: ReconcilerDeps) {}

  async reconcile(namespace: string, name: string): Promise<void> {
    const { api } = this.deps;
    const resource = await api.getDocService(namespace, name);
    if (!resource) return; // deleted: its children go with it (owner references)
    if (resource.metadata.deletionTimestamp) return this.finalize(resource);
    if (await this.syncFinalizer(resource)) return; // the update re-triggers a reconcile

    const problems = await this.missingReferences(resource);
    const applied: string[] = [];
    try {
      applied.push(...(await this.ensureCertificates(resource)));
    } catch (error) {
      problems.push(`internal certificates: ${(error as Error).message}`);
    }
    try {
      applied.push(...(await this.ensureMetricsToken(resource)));
    } catch (error) {
      problems.push(`metrics token: ${(error as Error).message}`);
    }
    const kedaInstalled = await api.crdInstalled("scaledobjects.keda.sh");
    const podMonitor = this.deps.podMonitor && (await api.crdInstalled("podmonitors.monitoring.coreos.com")) ? this.deps.podMonitor : undefined;
    // another adapter (KEDA's, prometheus-adapter) may hold the cluster's one external metrics API
    const { externalMetricsService } = this.deps;
    const conversionDemandServed = externalMetricsService !== undefined && (await api.apiServiceServedBy(EXTERNAL_METRICS_GROUP_VERSION, externalMetricsService));
    const desired = desiredState(resource, { profile: this.deps.profile, kedaInstalled, podMonitor, conversionDemandServed });
    const waiting = await this.writerWaitingForReaders(resource, desired.objects);
    for (const object of desired.objects) {
      if (object === waiting) continue;
      try {
        if (await this.applyIfChanged(object)) applied.push(`${object.kind}/${object.metadata.name}`);
      } catch (error) {
        problems.push(`cannot apply ${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
      }
    }
    if (applied.length > 0) await api.event(resource, "Normal", "Applied", `Applied ${applied.join(", ")}`);
    if (waiting) {
      this.deps.log("the telemetry API waits for the aggregator's rollout", { namespace, name });
      await api.event(resource, "Normal", "RolloutOrder", `${waiting.metadata.name} keeps its image until the aggregator runs its new one everywhere`);
    }
    if (resource.spec.kafka) {
      try {
        const changes = (await ensureTopic(resource.spec.kafka)).filter((change) => change !== "unchanged");
        if (changes.length > 0) await api.event(resource, "Normal", "KafkaTopic", `Topic ${resource.spec.kafka.topic}: ${changes.join(", ")}`);
      } catch (error) {
        problems.push(`Kafka topic ${resource.spec.kafka.topic}: ${(error as Error).message}`);
      }
    }
    const components = await this.observe(resource, desired.components);
    const changed = await this.writeStatus(resource, components, problems);
    if (changed && problems.length > 0) await api.event(resource, "Warning", "Degraded", problems.join("; "));
  }

  /** The telemetry API's Deployment when it must wait for the aggregator's rollout (rollout-order.ts). */
  private async writerWaitingForReaders(resource: DocService, objects: KubeObject[]): Promise<KubeObject | undefined> {
    const deployment = (component: "telemetryApi" | "telemetryAggregator") =>
      objects.find((object) => object.kind === "Deployment" && object.metadata.name === deploymentName(resource.metadata.name, component)) as DeploymentState | undefined;
    const writer = deployment("telemetryApi");
    const reader = deployment("telemetryAggregator");
    if (!writer || !reader) return undefined;
    const [writerLive, readerLive] = await Promise.all([this.deps.api.read<DeploymentState>(writer), this.deps.api.read<DeploymentState>(reader)]);
    return writerWaits({ live: writerLive, desired: writer }, { live: readerLive, desired: reader }) ? writer : undefined;
  }

  /** Applies when the live object is missing or was applied from another desired configuration. */
  private async applyIfChanged(object: KubeObject): Promise<boolean> {
    const hash = createHash("sha256").update(stringify(object) ?? "").digest("hex").slice(0, 32);
    const live = await this.deps.api.read<KubeObject>(object);
    const liveAnnotations = (live?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations;
    if (liveAnnotations?.[HASH_ANNOTATION] === hash) return false;
    const metadata = { ...object.metadata, annotations: { [HASH_ANNOTATION]: hash } };
    await this.deps.api.apply({ ...object, metadata });
    return true;
  }

  /**
   * The internal CA (created once, never replaced: replacing it would cut
   * every pod off until all had the new one) and a certificate per gRPC
   * identity, issued when missing, re-issued when near expiry or no longer
   * matching. Returns the Secrets written.
   */
  private async ensureCertificates(resource: DocService): Promise<string[]> {
    const { api } = this.deps;
    const { namespace, name } = resource.metadata;
    const written: string[] = [];
    const caName = internalCaSecretName(name);
    const readCa = async (): Promise<KeyPairPem | undefined> => {
      const data = await api.readSecretData(namespace, caName);
      return data?.["ca.crt"] && data["ca.key"] ? { certificate: data["ca.crt"], privateKey: data["ca.key"] } : undefined;
    };
    let ca = await readCa();
    if (!ca) {
      if (await api.createSecretIfAbsent(internalCaSecret(resource, createCa(`${name}.${namespace} internal gRPC CA`)))) written.push(`Secret/${caName}`);
      ca = await readCa(); // ours, or another writer's that came first
      if (!ca) throw new Error(`Secret ${caName} exists without ca.crt and ca.key`);
    }
    const identities: { secret: string; names: string[] }[] = componentsOf(resource)
      .filter((component) => GRPC_COMPONENTS.includes(component))
      .map((component) => ({ secret: tlsSecretName(name, component), names: serviceDnsNames(deploymentName(name, component), namespace) }));
    if (resource.spec.internalClients) identities.push({ secret: tlsSecretName(name, "client"), names: [`${name}-client`] });
    for (const { secret, names } of identities) {
      const live = await api.readSecretData(namespace, secret);
      if (live?.["ca.crt"] === ca.certificate && live["tls.key"] && leafIsCurrent(live["tls.crt"] ?? "", ca.certificate, names)) continue;
      await api.apply(tlsSecret(resource, secret, { ...issueLeaf(ca, names), ca: ca.certificate }));
      written.push(`Secret/${secret}`);
    }
    return written;
  }

  /**
   * The instance's metrics token, created once like the CA: pods read it at
   * start, so a new one would lock Prometheus out of every pod not restarted.
   * Read first, so that a reconcile of an instance that has it writes nothing.
   */
  private async ensureMetricsToken(resource: DocService): Promise<string[]> {
    const { api } = this.deps;
    const name = metricsTokenSecretName(resource.metadata.name);
    if (await api.secretKeyExists(resource.metadata.namespace, name, "token")) return [];
    if (await api.createSecretIfAbsent(metricsTokenSecret(resource, randomBytes(32).toString("base64url")))) return [`Secret/${name}`];
    // another writer's that came first, or one without the key, which no pod could start with
    if (!(await api.secretKeyExists(resource.metadata.namespace, name, "token"))) throw new Error(`Secret ${name} exists without the key token`);
    return [];
  }

  /** Secrets the spec names that do not exist (or lack the key): reported, not crashed on. */
  private async missingReferences(resource: DocService): Promise<string[]> {
    const { spec, metadata } = resource;
    const references: { name: string; key?: string; field: string }[] = [];
    if (spec.redis?.passwordSecret) references.push({ ...spec.redis.passwordSecret, field: "spec.redis.passwordSecret" });
    if (spec.hsm) references.push({ ...spec.hsm.pinSecret, field: "spec.hsm.pinSecret" });
    if (spec.smtp) references.push({ name: spec.smtp.secretName, field: "spec.smtp.secretName" });
    if (spec.adminTokenSecret) references.push({ ...spec.adminTokenSecret, field: "spec.adminTokenSecret" });
    const missing: string[] = [];
    for (const reference of references) {
      if (!(await this.deps.api.secretKeyExists(metadata.namespace, reference.name, reference.key))) {
        missing.push(`Secret ${reference.name}${reference.key ? ` (key ${reference.key})` : ""} named by ${reference.field} does not exist`);
      }
    }
    return missing;
  }

  private async observe(resource: DocService, components: DesiredComponent[]): Promise<Record<string, { desiredReplicas: number; readyReplicas: number }>> {
    const observed: Record<string, { desiredReplicas: number; readyReplicas: number }> = {};
    for (const component of components) {
      const live = await this.deps.api.read<LiveDeployment & KubeObject>({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: component.deploymentName, namespace: resource.metadata.namespace },
      });
      observed[component.name] = {
        // an autoscaled Deployment's replica count is the autoscaler's, at least the computed floor
        desiredReplicas: Math.max(component.replicas, live?.spec?.replicas ?? 0),
        readyReplicas: live?.status?.readyReplicas ?? 0,
      };
    }
    return observed;
  }

  /** Writes the status when it changed; returns whether it did. */
  private async writeStatus(resource: DocService, components: DocServiceStatus["components"] & object, problems: string[]): Promise<boolean> {
    const generation = resource.metadata.generation;
    const waiting = Object.entries(components).filter(([, c]) => c.readyReplicas < c.desiredReplicas);
    const degraded = problems.length > 0;
    const ready = !degraded && waiting.length === 0;
    const previous = resource.status?.conditions ?? [];
    const condition = (type: Condition["type"], status: boolean, reason: string, message: string): Condition => {
      const before = previous.find((c) => c.type === type);
      const value = status ? "True" : "False";
      return {
        type,
        status: value,
        reason,
        message,
        observedGeneration: generation,
        lastTransitionTime: before?.status === value && before.lastTransitionTime ? before.lastTransitionTime : new Date().toISOString(),
      };
    };
    const waitingText = waiting.map(([name, c]) => `${name} ${c.readyReplicas}/${c.desiredReplicas}`).join(", ");
    const status: DocServiceStatus = {
      observedGeneration: generation,
      version: resource.spec.version,
      components,
      summary: Object.entries(components)
        .map(([name, c]) => `${name} ${c.readyReplicas}/${c.desiredReplicas}`)
        .join(", "),
      conditions: [
        condition("Ready", ready, ready ? "AllComponentsReady" : degraded ? "Degraded" : "ComponentsNotReady", ready ? "Every component has its replicas ready." : degraded ? problems.join("; ") : `Waiting for ${waitingText}.`),
        condition("Progressing", waiting.length > 0, waiting.length > 0 ? "RollingOut" : "Stable", waiting.length > 0 ? `Waiting for ${waitingText}.` : "Nothing to roll out."),
        condition("Degraded", degraded, degraded ? "InvalidReferenceOrApplyError" : "AsExpected", degraded ? problems.join("; ") : "No problem found."),
      ],
    };
    if (stringify(withoutTimes(status)) === stringify(withoutTimes(resource.status ?? {}))) return false;
    await this.deps.api.replaceStatus({ ...resource, status });
    this.deps.log("status updated", { resource: `${resource.metadata.namespace}/${resource.metadata.name}`, ready, degraded });
    return true;
  }

  /** The finalizer exists only while deleting must also delete the Kafka topic (external state). */
  private async syncFinalizer(resource: DocService): Promise<boolean> {
    const wanted = resource.spec.kafka?.deleteTopicsOnDelete === true;
    const finalizers = resource.metadata.finalizers ?? [];
    const has = finalizers.includes(TOPIC_FINALIZER);
    if (wanted === has) return false;
    const next = wanted ? [...finalizers, TOPIC_FINALIZER] : finalizers.filter((f) => f !== TOPIC_FINALIZER);
    await this.deps.api.replaceDocService({ ...resource, metadata: { ...resource.metadata, finalizers: next } });
    return true;
  }

  private async finalize(resource: DocService): Promise<void> {
    const finalizers = resource.metadata.finalizers ?? [];
    if (!finalizers.includes(TOPIC_FINALIZER)) return;
    if (resource.spec.kafka?.deleteTopicsOnDelete) {
      await deleteTopic(resource.spec.kafka);
      await this.deps.api.event(resource, "Normal", "KafkaTopicDeleted", `Deleted topic ${resource.spec.kafka.topic}`);
    }
    await this.deps.api.replaceDocService({ ...resource, metadata: { ...resource.metadata, finalizers: finalizers.filter((f) => f !== TOPIC_FINALIZER) } });
    this.deps.log("finalized", { resource: `${resource.metadata.namespace}/${resource.metadata.name}`, by: FIELD_MANAGER });
  }
}

function withoutTimes(status: DocServiceStatus): DocServiceStatus {
  return { ...status, conditions: status.conditions?.map(({ lastTransitionTime: _, ...rest }) => rest as Condition) };
}
