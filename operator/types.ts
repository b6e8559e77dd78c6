/** The DocService resource as the operator reads it (defaults applied by the API server from operator/crd.ts). */
import type { ComponentName, LimitName } from "./crd.js";

export interface SecretKeyRef {
  name: string;
  key: string;
}

export interface ComponentSpec {
  replicas?: number;
  autoscaling?: { minReplicas: number; maxReplicas: number };
  shutdownTimeoutSeconds?: number;
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
}

export interface DocServiceSpec {
  image: string;
  conversionImage: string;
  version: string;
  components: Partial<Record<ComponentName, ComponentSpec>>;
  kafka?: {
    bootstrapServers: string[];
    topic: string;
    partitions: number;
    replicationFactor: number;
    retentionHours: number;
    deleteTopicsOnDelete: boolean;
  };
  redis?: { address: string; passwordSecret?: SecretKeyRef; tls?: boolean };
  hsm?: { modulePath: string; tokenLabel: string; keyLabel: string; pinSecret: SecretKeyRef };
  smtp?: { secretName: string };
  adminTokenSecret?: SecretKeyRef;
  signing?: { level?: "B-B" | "B-T" | "B-LT" | "B-LTA"; tsaUrl?: string };
  conversion: { backend: "local" | "gotenberg"; gotenbergUrl?: string };
  /** NetworkPolicy peers (podSelector/namespaceSelector/ipBlock) allowed to call the backends' gRPC directly; they mount the `<name>-client-tls` Secret. */
  internalClients?: { from: object[] };
  /** Connection limits, each written to the ConfigMap as its variable (LIMITS in operator/crd.ts); an omitted one keeps the platform's default. */
  limits?: Partial<Record<LimitName, number>>;
  expectedLoad: { sign: number; convert: number; collect: number; auth: number };
  autoscaling: { mode: "auto" | "hpa" | "keda"; headroom: number; scaleDownStabilizationSeconds: number };
}

export interface Condition {
  type: "Ready" | "Progressing" | "Degraded";
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export interface DocServiceStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  components?: Record<string, { desiredReplicas: number; readyReplicas: number }>;
  summary?: string;
  version?: string;
}

export interface DocService {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; uid: string; generation?: number; deletionTimestamp?: string; finalizers?: string[] };
  spec: DocServiceSpec;
  status?: DocServiceStatus;
}

/** Any Kubernetes object the operator applies: what server-side apply needs. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller: boolean; blockOwnerDeletion: boolean }[];
  };
  [field: string]: unknown;
}
