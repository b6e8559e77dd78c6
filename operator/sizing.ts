/**
 * Sizing from load tests: how many replicas a component needs for the
 * expected load, and what its autoscaler should aim for, both from the
 * capacities k6 measured (loadtest/sizing-profile.json).
 */
import type { ComponentName } from "./crd.js";

/** What one replica of a component sustains at its p95 latency target, as measured. */
export interface ComponentCapacity {
  /** The route (or RPC) the capacity was measured on. */
  route: string;
  /** Requests (or events) per second one replica serves at the p95 target. */
  requestsPerSecond: number;
  /** When the capacity counts more than one unit per request: the events of each report, for the aggregator (one Kafka record per report). */
  unitsPerRequest?: number;
  p95TargetMs: number;
  /** CPU use of the replica at that rate, in percent of one core (so of a 1-CPU request; the HPA target is derived from it). */
  cpuPercentAtCapacity: number;
  /** The replica's memory (working set) at that rate, where it was measured in a pod of its own. */
  memoryMiBAtCapacity?: number;
}

export interface SizingProfile {
  /** ISO 8601 time of the measurement. */
  measuredAt: string;
  /** How it was measured (command, machine, replica resources). */
  method: string;
  components: Partial<Record<ComponentName, ComponentCapacity>>;
}

/** Expected requests per second per route, from the DocService spec. */
export interface ExpectedLoad {
  sign: number;
  convert: number;
  collect: number;
  auth: number;
}

export interface Bounds {
  min: number;
  max: number;
}

/** The load each component sees: the gateway carries every route; each backend its own. */
export function componentLoad(component: ComponentName, load: ExpectedLoad): number {
  switch (component) {
    case "gateway":
      return load.sign + load.convert + load.collect + load.auth;
    case "signing":
      return load.sign;
    case "conversion":
      return load.convert;
    case "keys":
      return load.auth;
    case "telemetryApi":
    case "telemetryAggregator":
      return load.collect;
  }
}

/**
 * replicas = ⌈expected load ÷ capacity per replica × headroom⌉, within the
 * bounds. No load (or no measured capacity) gives the lower bound.
 */
export function replicasFor(expectedPerSecond: number, capacity: ComponentCapacity | undefined, headroom: number, bounds: Bounds): number {
  if (bounds.min > bounds.max) throw new RangeError(`min ${bounds.min} exceeds max ${bounds.max}`);
  if (!capacity || capacity.requestsPerSecond <= 0 || expectedPerSecond <= 0) return bounds.min;
  const needed = Math.ceil((expectedPerSecond / capacity.requestsPerSecond) * headroom - 1e-9);
  return Math.min(bounds.max, Math.max(bounds.min, needed));
}

/**
 * The HPA's average CPU utilisation target: the CPU a replica used at its
 * measured capacity, less the headroom, so scaling out starts before a
 * replica reaches its p95 limit. Kept within 10–95 %.
 */
export function cpuTargetPercent(capacity: ComponentCapacity | undefined, headroom: number): number {
  const atCapacity = capacity?.cpuPercentAtCapacity ?? 80;
  return Math.round(Math.min(95, Math.max(10, atCapacity / headroom)));
}

/**
 * The KEDA Kafka trigger's lag threshold per replica: the Kafka records one
 * aggregator replica applies in `catchUpSeconds`, less the headroom. KEDA
 * counts lag in records, and a record holds a report's events, so the
 * capacity in events is divided by the events per report it was measured with.
 */
export function lagThreshold(capacity: ComponentCapacity | undefined, headroom: number, catchUpSeconds = 10): number {
  const perSecond = capacity ? capacity.requestsPerSecond / (capacity.unitsPerRequest ?? 1) : 1000;
  return Math.max(1, Math.floor((perSecond * catchUpSeconds) / headroom));
}

/** An autoscaling/v2 HPA's `behavior` (also KEDA's horizontalPodAutoscalerConfig.behavior). */
export interface ScalingBehavior {
  scaleUp: ScalingRules;
  scaleDown: ScalingRules;
}

interface ScalingRules {
  stabilizationWindowSeconds: number;
  selectPolicy: "Max";
  policies: Array<{ type: "Percent" | "Pods"; value: number; periodSeconds: number }>;
}

/**
 * How fast an autoscaler may move, from the same measurements as its target.
 * Up at once: every 15 s it may double, or add the replicas the expected load
 * needs (at least Kubernetes' default of 4), so a cold start reaches the
 * expected peak in one step. Down slowly: after `scaleDownStabilizationSeconds`
 * of lower demand, at most the share of replicas the headroom covers each
 * minute (at least one). A replica at the target runs at capacity ÷ headroom,
 * so removing 1 − 1/headroom of them leaves the others at most at capacity:
 * the p95 the profile measured holds while the surplus drains.
 */
export function scalingBehavior(replicasForExpectedLoad: number, headroom: number, scaleDownStabilizationSeconds: number): ScalingBehavior {
  const removableShare = 1 - 1 / headroom;
  return {
    scaleUp: {
      stabilizationWindowSeconds: 0,
      selectPolicy: "Max",
      policies: [
        { type: "Percent", value: 100, periodSeconds: 15 },
        { type: "Pods", value: Math.max(4, replicasForExpectedLoad), periodSeconds: 15 },
      ],
    },
    scaleDown: {
      stabilizationWindowSeconds: scaleDownStabilizationSeconds,
      selectPolicy: "Max",
      policies: [
        { type: "Percent", value: Math.max(1, Math.floor(removableShare * 100)), periodSeconds: 60 },
        { type: "Pods", value: 1, periodSeconds: 60 },
      ],
    },
  };
}
