/**
 * Readers of the usage topic roll out before its writers. A new version's
 * telemetry API may write records an older aggregator cannot read, and an
 * aggregator skips what it cannot read (a message that is not a usage record
 * moves its fence like any other), so events answered 202 would never count.
 * While the aggregator's Deployment is not yet running its desired image
 * everywhere, a telemetry API Deployment whose image changes keeps its old
 * one; the aggregator's progress triggers the reconcile that applies it.
 */
import type { KubeObject } from "./types.js";

export interface DeploymentState extends KubeObject {
  metadata: KubeObject["metadata"] & { generation?: number };
  spec?: { replicas?: number; template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

const imagesOf = (deployment: DeploymentState) => (deployment.spec?.template?.spec?.containers ?? []).map((container) => container.image ?? "").join("\n");

/** The live Deployment runs the desired images in every replica: its spec has them, and its rollout finished. */
export function rolledOut(live: DeploymentState | undefined, desired: DeploymentState): boolean {
  if (!live || imagesOf(live) !== imagesOf(desired)) return false;
  const replicas = live.spec?.replicas ?? 1;
  const status = live.status ?? {};
  return (
    (status.observedGeneration ?? 0) >= (live.metadata.generation ?? 0) &&
    (status.updatedReplicas ?? 0) >= replicas &&
    (status.replicas ?? 0) <= (status.updatedReplicas ?? 0) &&
    (status.availableReplicas ?? 0) >= replicas
  );
}

/**
 * Whether the writer's new Deployment must wait: its image changes, and an
 * aggregator already runs (one that does not yet exist reads nothing old)
 * without having rolled out to its desired image.
 */
export function writerWaits(
  writer: { live: DeploymentState | undefined; desired: DeploymentState },
  reader: { live: DeploymentState | undefined; desired: DeploymentState },
): boolean {
  if (!writer.live || imagesOf(writer.live) === imagesOf(writer.desired)) return false;
  if (!reader.live) return false;
  return !rolledOut(reader.live, reader.desired);
}
