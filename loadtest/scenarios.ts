/**
 * The k6 scenarios the load runner knows (loadtest/scenarios/*.js), and which
 * of them measures each component's capacity.
 */
import type { ComponentName } from "../operator/crd.js";
import type { Protocol } from "./k6.js";

export interface Scenario {
  name: string;
  script: string;
  protocol: Protocol;
  /** The route or RPC, as the profile names it. */
  route: string;
  p95Ms: number;
  /** Requests per second in check mode. */
  checkRate: number;
  env?: Record<string, string>;
}

/** Every scenario, with its p95 target (loadtest/README.md says why these). */
export const SCENARIOS: Scenario[] = [
  { name: "collect", script: "collect.js", protocol: "http", route: "POST /v1/collect (1 event per report)", p95Ms: 100, checkRate: 20 },
  {
    name: "collect-10",
    script: "collect.js",
    protocol: "http",
    route: "POST /v1/collect (10 events per report; events/s into the embedded usage store)",
    p95Ms: 100,
    checkRate: 10,
    env: { EVENTS: "10" },
  },
  { name: "sign", script: "sign.js", protocol: "http", route: "POST /v1/sign (1-page PDF, certificate page)", p95Ms: 1000, checkRate: 2 },
  { name: "convert", script: "convert.js", protocol: "http", route: "POST /v1/convert?from=docx (1-page DOCX)", p95Ms: 3000, checkRate: 1 },
  { name: "register", script: "register.js", protocol: "http", route: "GET /v1/auth/register (a new address each)", p95Ms: 500, checkRate: 5 },
  { name: "verify", script: "verify.js", protocol: "http", route: "GET /v1/auth/verify (wrong code, 401)", p95Ms: 200, checkRate: 10 },
  {
    name: "grpc-telemetry-collect",
    script: "grpc-telemetry-collect.js",
    protocol: "grpc",
    route: "gRPC docservice.v1.TelemetryService/Collect (1 event)",
    p95Ms: 100,
    checkRate: 20,
  },
  {
    name: "grpc-signing-verification-key",
    script: "grpc-signing-verification-key.js",
    protocol: "grpc",
    route: "gRPC docservice.v1.SigningService/GetVerificationKey",
    p95Ms: 100,
    checkRate: 20,
  },
  { name: "grpc-keys-authenticate", script: "grpc-keys-authenticate.js", protocol: "grpc", route: "gRPC docservice.v1.KeyService/Authenticate", p95Ms: 100, checkRate: 20 },
];

export interface Sizing {
  component: ComponentName;
  scenario: string;
  /** Units the capacity is counted in per request: events per report for the aggregator. */
  unitsPerRequest: number;
  /** First rate of the search, requests/s. */
  startRate: number;
  /** Step length relative to LOADTEST_STEP_S: slow routes need longer steps to build a queue. */
  stepFactor: number;
  /** What the capacity is of, when the scenario's route does not say it. */
  route?: string;
}

/** Each component's main route, in embedded mode (loadtest/README.md says why these). */
export const EMBEDDED_SIZINGS: Sizing[] = [
  { component: "gateway", scenario: "collect", unitsPerRequest: 1, startRate: 50, stepFactor: 1 },
  { component: "telemetryApi", scenario: "grpc-telemetry-collect", unitsPerRequest: 1, startRate: 50, stepFactor: 1 },
  { component: "telemetryAggregator", scenario: "collect-10", unitsPerRequest: 10, startRate: 20, stepFactor: 1 },
  { component: "keys", scenario: "register", unitsPerRequest: 1, startRate: 50, stepFactor: 1 },
  { component: "signing", scenario: "sign", unitsPerRequest: 1, startRate: 10, stepFactor: 1 },
  { component: "conversion", scenario: "convert", unitsPerRequest: 1, startRate: 2, stepFactor: 2 },
];

/**
 * On the node, a backend's gRPC Service is reached with mutual TLS, as the
 * gateway does; keys is measured on Authenticate, since register is
 * rate-limited per client address (the whole load comes from one) and the
 * platform's limits are not the operator's to lift.
 */
export const CLUSTER_SIZINGS: Sizing[] = EMBEDDED_SIZINGS.map((sizing) =>
  sizing.component === "keys"
    ? { ...sizing, scenario: "grpc-keys-authenticate", startRate: 200 }
    : sizing.component === "telemetryAggregator"
      ? { ...sizing, route: "POST /v1/collect (10 events per report; events/s the aggregator applies from Kafka to Redis)" }
      : sizing,
);

export function scenarioNamed(name: string): Scenario {
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (!scenario) throw new Error(`unknown scenario "${name}": expected one of ${SCENARIOS.map((s) => s.name).join(", ")}`);
  return scenario;
}
