import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { componentLoad, cpuTargetPercent, lagThreshold, replicasFor, scalingBehavior, type ComponentCapacity } from "./sizing.js";

const capacity = (requestsPerSecond: number, cpuPercentAtCapacity = 80): ComponentCapacity => ({
  route: "POST /v1/sign",
  requestsPerSecond,
  p95TargetMs: 500,
  cpuPercentAtCapacity,
});

describe("sizing", () => {
  test("replicas = ceil(load / capacity × headroom)", () => {
    assert.equal(replicasFor(100, capacity(50), 1, { min: 1, max: 10 }), 2);
    assert.equal(replicasFor(100, capacity(50), 1.3, { min: 1, max: 10 }), 3);
    assert.equal(replicasFor(101, capacity(50), 1, { min: 1, max: 10 }), 3);
    assert.equal(replicasFor(1, capacity(50), 1.3, { min: 1, max: 10 }), 1);
  });

  test("exact multiples do not round up from floating-point noise", () => {
    assert.equal(replicasFor(30, capacity(10), 1.1, { min: 1, max: 10 }), 4); // 3.3000000000000003 → 4
    assert.equal(replicasFor(300, capacity(100), 1, { min: 1, max: 10 }), 3);
    assert.equal(replicasFor(0.3, capacity(0.1), 1, { min: 1, max: 10 }), 3); // 2.9999999999999996 → 3
  });

  test("bounds win; no load or no measurement gives the minimum", () => {
    assert.equal(replicasFor(10_000, capacity(50), 1.3, { min: 2, max: 8 }), 8);
    assert.equal(replicasFor(0, capacity(50), 1.3, { min: 2, max: 8 }), 2);
    assert.equal(replicasFor(500, undefined, 1.3, { min: 2, max: 8 }), 2);
    assert.throws(() => replicasFor(1, capacity(1), 1, { min: 3, max: 2 }), RangeError);
  });

  test("each component sees its routes; the gateway sees them all", () => {
    const load = { sign: 10, convert: 5, collect: 1000, auth: 2 };
    assert.equal(componentLoad("gateway", load), 1017);
    assert.equal(componentLoad("signing", load), 10);
    assert.equal(componentLoad("conversion", load), 5);
    assert.equal(componentLoad("keys", load), 2);
    assert.equal(componentLoad("telemetryApi", load), 1000);
    assert.equal(componentLoad("telemetryAggregator", load), 1000);
  });

  test("autoscaler targets come from the same profile, less the headroom", () => {
    assert.equal(cpuTargetPercent(capacity(50, 90), 1.5), 60);
    assert.equal(cpuTargetPercent(capacity(50, 200), 1), 95);
    assert.equal(cpuTargetPercent(capacity(50, 5), 1), 10);
    assert.equal(cpuTargetPercent(undefined, 1.3), 62);
    assert.equal(lagThreshold(capacity(2000), 2), 10_000);
    assert.equal(lagThreshold(capacity(0.01), 2), 1);
    // KEDA counts Kafka records: events applied per second over the events each record (a report) held when measured
    assert.equal(lagThreshold({ ...capacity(9600), unitsPerRequest: 10 }, 1.3), 7384);
  });

  test("scaling up is immediate and reaches the expected load in one step; scaling down removes what the headroom covers", () => {
    const { scaleUp, scaleDown } = scalingBehavior(10, 1.3, 300);
    assert.equal(scaleUp.stabilizationWindowSeconds, 0);
    assert.deepEqual(scaleUp.policies, [{ type: "Percent", value: 100, periodSeconds: 15 }, { type: "Pods", value: 10, periodSeconds: 15 }]);
    assert.equal(scaleDown.stabilizationWindowSeconds, 300);
    // at the target a replica runs at capacity / 1.3; without 23 % of them the others stay under capacity (1 / 0.77 < 1.3)
    assert.deepEqual(scaleDown.policies, [{ type: "Percent", value: 23, periodSeconds: 60 }, { type: "Pods", value: 1, periodSeconds: 60 }]);
    assert.equal(scalingBehavior(1, 2, 0).scaleDown.policies[0]!.value, 50);
    assert.equal(scalingBehavior(1, 1, 0).scaleDown.policies[0]!.value, 1, "no headroom: one replica a minute");
    assert.equal(scalingBehavior(1, 1.3, 0).scaleUp.policies[1]!.value, 4, "at least Kubernetes' default step");
  });
});
