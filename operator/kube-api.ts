/**
 * The operator's calls to the Kubernetes API, through @kubernetes/client-node:
 * server-side apply of children under one field manager, the DocService
 * resource and its status, Events, KEDA discovery and the leader Lease.
 */
import {
  ApiException,
  ApiextensionsV1Api,
  ApiregistrationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  V1MicroTime,
  type KubernetesObject,
  type V1Lease,
  type V1Pod,
  type V1Secret,
} from "@kubernetes/client-node";
import { GROUP, PLURAL, VERSION } from "./crd.js";
import type { LeaseRecord, LeaseStore } from "./leader-election.js";
import type { DocService, KubeObject } from "./types.js";

export const FIELD_MANAGER = "docservice-operator";

const hasCode = (error: unknown, code: number) => error instanceof ApiException && error.code === code;

/** The call's result, or undefined when the object does not exist (404). */
async function unlessNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (hasCode(error, 404)) return undefined;
    throw error;
  }
}

/** Whether a write went through; false when someone else wrote first (409). */
async function unlessConflict(call: Promise<unknown>): Promise<boolean> {
  try {
    await call;
    return true;
  } catch (error) {
    if (hasCode(error, 409)) return false;
    throw error;
  }
}

export class KubeApi {
  readonly objects: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly extensions: ApiextensionsV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly registration: ApiregistrationV1Api;

  constructor(readonly config: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(config);
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.core = config.makeApiClient(CoreV1Api);
    this.extensions = config.makeApiClient(ApiextensionsV1Api);
    this.coordination = config.makeApiClient(CoordinationV1Api);
    this.registration = config.makeApiClient(ApiregistrationV1Api);
  }

  async getDocService(namespace: string, name: string): Promise<DocService | undefined> {
    return (await unlessNotFound(this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name }))) as DocService | undefined;
  }

  async replaceDocService(resource: DocService): Promise<DocService> {
    const { namespace, name } = resource.metadata;
    return (await this.custom.replaceNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name, body: resource })) as DocService;
  }

  async replaceStatus(resource: DocService): Promise<void> {
    const { namespace, name } = resource.metadata;
    await this.custom.replaceNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name, body: resource });
  }

  /** The live object, or undefined when it does not exist. */
  async read<T extends KubernetesObject>(object: KubeObject): Promise<T | undefined> {
    return (await unlessNotFound(this.objects.read({ apiVersion: object.apiVersion, kind: object.kind, metadata: object.metadata }))) as T | undefined;
  }

  /** Server-side apply: creates or updates the fields this operator manages, taking them over from others. */
  async apply(object: KubeObject): Promise<void> {
    await this.objects.patch(object as KubernetesObject, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  }

  async crdInstalled(name: string): Promise<boolean> {
    return (await unlessNotFound(this.extensions.readCustomResourceDefinition({ name }))) !== undefined;
  }

  async secretKeyExists(namespace: string, name: string, key?: string): Promise<boolean> {
    const secret = await unlessNotFound(this.core.readNamespacedSecret({ namespace, name }));
    if (!secret) return false;
    return key === undefined || Object.hasOwn(secret.data ?? {}, key) || Object.hasOwn(secret.stringData ?? {}, key);
  }

  /** The Secret's data, decoded as UTF-8; undefined when it does not exist. */
  async readSecretData(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    const secret = await unlessNotFound(this.core.readNamespacedSecret({ namespace, name }));
    if (!secret) return undefined;
    return Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, "base64").toString("utf8")]));
  }

  /** A ConfigMap's data; undefined when it does not exist. */
  async readConfigMapData(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    return (await unlessNotFound(this.core.readNamespacedConfigMap({ namespace, name })))?.data ?? undefined;
  }

  async listPods(namespace: string, labelSelector: string): Promise<V1Pod[]> {
    return (await this.core.listNamespacedPod({ namespace, labelSelector })).items;
  }

  /** Whether the APIService of that group version sends its requests to this Service ("namespace/name"). */
  async apiServiceServedBy(groupVersion: string, service: string): Promise<boolean> {
    const [group, version] = [groupVersion.slice(0, groupVersion.lastIndexOf("/")), groupVersion.slice(groupVersion.lastIndexOf("/") + 1)];
    const apiService = await unlessNotFound(this.registration.readAPIService({ name: `${version}.${group}` }));
    const target = apiService?.spec?.service;
    return target !== undefined && `${target.namespace}/${target.name}` === service;
  }

  /** Creates the Secret; false when one by that name already exists (409), which is left as it is. */
  async createSecretIfAbsent(secret: KubeObject): Promise<boolean> {
    return unlessConflict(this.core.createNamespacedSecret({ namespace: secret.metadata.namespace, body: secret as V1Secret }));
  }

  /** A Kubernetes Event on the resource (best effort: an Event that cannot be written is not worth a failed reconcile). */
  async event(resource: DocService, type: "Normal" | "Warning", reason: string, message: string): Promise<void> {
    const now = new Date();
    await this.core
      .createNamespacedEvent({
        namespace: resource.metadata.namespace,
        body: {
          metadata: { generateName: `${resource.metadata.name}.`, namespace: resource.metadata.namespace },
          involvedObject: { apiVersion: `${GROUP}/${VERSION}`, kind: resource.kind, name: resource.metadata.name, namespace: resource.metadata.namespace, uid: resource.metadata.uid },
          type,
          reason,
          message,
          source: { component: FIELD_MANAGER },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      })
      .catch(() => {});
  }

  leaseStore(namespace: string, name: string): LeaseStore {
    const toRecord = (lease: V1Lease): LeaseRecord => ({
      holder: lease.spec?.holderIdentity || undefined,
      renewTime: lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0,
      durationSeconds: lease.spec?.leaseDurationSeconds ?? 15,
      transitions: lease.spec?.leaseTransitions ?? 0,
      resourceVersion: lease.metadata?.resourceVersion,
    });
    const toLease = (record: LeaseRecord): V1Lease => ({
      metadata: { name, namespace, resourceVersion: record.resourceVersion },
      spec: {
        holderIdentity: record.holder ?? "",
        // MicroTime: the API server wants six fractional digits, which V1MicroTime writes
        renewTime: new V1MicroTime(record.renewTime || 0),
        leaseDurationSeconds: record.durationSeconds,
        leaseTransitions: record.transitions,
      },
    });
    return {
      read: async () => {
        const lease = await unlessNotFound(this.coordination.readNamespacedLease({ namespace, name }));
        return lease && toRecord(lease);
      },
      create: (record) => unlessConflict(this.coordination.createNamespacedLease({ namespace, body: toLease(record) })),
      replace: (record) => unlessConflict(this.coordination.replaceNamespacedLease({ namespace, name, body: toLease(record) })),
    };
  }
}
