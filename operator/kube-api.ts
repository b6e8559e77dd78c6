/**
 * The operator's calls to the Kubernetes API, through @kubernetes/client-node:
 * server-side apply of children under one field manager, the DocService
 * resource and its status, Events, KEDA discovery and the leader Lease.
 */
import {
  ApiException,
  ApiextensionsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  V1MicroTime,
  type KubernetesObject,
  type V1Lease,
} from "@kubernetes/client-node";
import { GROUP, PLURAL, VERSION } from "./crd.js";
import type { LeaseRecord, LeaseStore } from "./leader-election.js";
import type { DocService, KubeObject } from "./types.js";

export const FIELD_MANAGER = "docservice-operator";

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

function isConflict(error: unknown): boolean {
  return error instanceof ApiException && error.code === 409;
}

export class KubeApi {
  readonly objects: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly extensions: ApiextensionsV1Api;
  private readonly coordination: CoordinationV1Api;

  constructor(readonly config: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(config);
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.core = config.makeApiClient(CoreV1Api);
    this.extensions = config.makeApiClient(ApiextensionsV1Api);
    this.coordination = config.makeApiClient(CoordinationV1Api);
  }

  async getDocService(namespace: string, name: string): Promise<DocService | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name })) as DocService;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
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
    try {
      return (await this.objects.read({ apiVersion: object.apiVersion, kind: object.kind, metadata: object.metadata })) as T;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Server-side apply: creates or updates the fields this operator manages, taking them over from others. */
  async apply(object: KubeObject): Promise<void> {
    await this.objects.patch(object as KubernetesObject, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  }

  async crdInstalled(name: string): Promise<boolean> {
    try {
      await this.extensions.readCustomResourceDefinition({ name });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async secretKeyExists(namespace: string, name: string, key?: string): Promise<boolean> {
    try {
      const secret = await this.core.readNamespacedSecret({ namespace, name });
      return key === undefined || Object.hasOwn(secret.data ?? {}, key) || Object.hasOwn(secret.stringData ?? {}, key);
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
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
        try {
          return toRecord(await this.coordination.readNamespacedLease({ namespace, name }));
        } catch (error) {
          if (isNotFound(error)) return undefined;
          throw error;
        }
      },
      create: async (record) => {
        try {
          await this.coordination.createNamespacedLease({ namespace, body: toLease(record) });
          return true;
        } catch (error) {
          if (isConflict(error)) return false;
          throw error;
        }
      },
      replace: async (record) => {
        try {
          await this.coordination.replaceNamespacedLease({ namespace, name, body: toLease(record) });
          return true;
        } catch (error) {
          if (isConflict(error)) return false;
          throw error;
        }
      },
    };
  }
}
