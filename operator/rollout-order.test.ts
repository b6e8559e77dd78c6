import assert from "node:assert/strict";
import { test } from "node:test";
import { rolledOut, writerWaits, type DeploymentState } from "./rollout-order.js";

/** A Deployment of `image`; `status` as the Deployment controller reports it. */
function deployment(image: string, status?: DeploymentState["status"], generation = 2, replicas = 2): DeploymentState {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "acme-telemetry-aggregator", namespace: "docs", generation },
    spec: { replicas, template: { spec: { containers: [{ image }] } } },
    status,
  };
}

const done = { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 };

test("a Deployment has rolled out when every replica runs its spec's image and is available", () => {
  assert.ok(rolledOut(deployment("core:0.3.0", done), deployment("core:0.3.0")));
  assert.ok(!rolledOut(undefined, deployment("core:0.3.0")));
  assert.ok(!rolledOut(deployment("core:0.2.0", done), deployment("core:0.3.0")), "another image");
  assert.ok(!rolledOut(deployment("core:0.3.0", { ...done, observedGeneration: 1 }), deployment("core:0.3.0")), "the controller has not seen the change");
  assert.ok(!rolledOut(deployment("core:0.3.0", { ...done, replicas: 3 }), deployment("core:0.3.0")), "an old pod still runs beside the new ones");
  assert.ok(!rolledOut(deployment("core:0.3.0", { ...done, updatedReplicas: 1, replicas: 2 }), deployment("core:0.3.0")));
  assert.ok(!rolledOut(deployment("core:0.3.0", { ...done, availableReplicas: 1 }), deployment("core:0.3.0")), "a new pod not yet available");
  assert.ok(rolledOut(deployment("core:0.3.0", { observedGeneration: 2 }, 2, 0), deployment("core:0.3.0")), "scaled to zero");
});

test("the telemetry API's new image waits until the aggregator runs its own new image everywhere", () => {
  const writer = { live: deployment("core:0.2.0", done), desired: deployment("core:0.3.0") };
  assert.ok(writerWaits(writer, { live: deployment("core:0.2.0", done), desired: deployment("core:0.3.0") }), "the aggregator not yet changed");
  assert.ok(writerWaits(writer, { live: deployment("core:0.3.0", { ...done, updatedReplicas: 1, replicas: 3 }), desired: deployment("core:0.3.0") }), "the aggregator half way");
  assert.ok(!writerWaits(writer, { live: deployment("core:0.3.0", done), desired: deployment("core:0.3.0") }), "the aggregator rolled out");
  assert.ok(!writerWaits(writer, { live: undefined, desired: deployment("core:0.3.0") }), "no aggregator yet: nothing old reads the topic");
  assert.ok(!writerWaits({ live: undefined, desired: deployment("core:0.3.0") }, { live: deployment("core:0.2.0", done), desired: deployment("core:0.3.0") }), "a first install");
  const unchanged = { live: deployment("core:0.3.0", done), desired: deployment("core:0.3.0") };
  assert.ok(!writerWaits(unchanged, { live: deployment("core:0.2.0", done), desired: deployment("core:0.3.0") }), "other changes to the telemetry API never wait");
});
