// Shared by every scenario: the constant-arrival-rate executor and the
// thresholds, parameterised by environment variables (loadtest/README.md).
//
//   RATE       requests per second (constant arrival rate; may be fractional), default 5
//   DURATION   how long to hold the rate, default "5s"
//   P95_MS     p95 latency target in milliseconds (threshold), default 500
//   VUS        pre-allocated virtual users, default max(2, RATE / 5)
//   MAX_VUS    upper bound of virtual users, default max(20, 4 × VUS)
//   HOSTS      names resolved to addresses, "name=address,…" (a cluster's Service names, which
//              its certificates carry, to their ClusterIPs), default none

export const RATE = positive("RATE", 5);
export const DURATION = __ENV.DURATION || "5s";
export const P95_MS = positive("P95_MS", 500);
const VUS = Math.ceil(positive("VUS", Math.max(2, RATE / 5)));
const MAX_VUS = Math.ceil(positive("MAX_VUS", Math.max(20, 4 * VUS)));

function positive(name, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

export function hosts() {
  const pairs = (__ENV.HOSTS || "").split(",").filter(Boolean).map((pair) => pair.split("="));
  for (const pair of pairs) if (pair.length !== 2 || !pair[0] || !pair[1]) throw new Error(`HOSTS must be "name=address,…", got "${__ENV.HOSTS}"`);
  return Object.fromEntries(pairs);
}

/** Required environment variable. */
export function required(name) {
  const value = __ENV[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

/**
 * k6 options for one route: constant arrival rate, and thresholds on the p95
 * of `durationMetric`, on the share of failed requests (`failedMetric`, HTTP
 * only) and on the share of failed checks.
 */
export function scenarioOptions(durationMetric, failedMetric) {
  const thresholds = {
    [durationMetric]: [`p(95)<${P95_MS}`],
    checks: ["rate>0.99"],
  };
  if (failedMetric) thresholds[failedMetric] = ["rate<0.01"];
  return {
    scenarios: {
      load: {
        executor: "constant-arrival-rate",
        // A fractional rate (e.g. 2.5/s) as whole iterations per 100 s, evenly spaced.
        rate: Number.isInteger(RATE) ? RATE : Math.round(RATE * 100),
        timeUnit: Number.isInteger(RATE) ? "1s" : "100s",
        duration: DURATION,
        preAllocatedVUs: VUS,
        maxVUs: MAX_VUS,
        gracefulStop: "10s",
      },
    },
    thresholds,
    hosts: hosts(),
    summaryTrendStats: ["avg", "min", "med", "max", "p(95)", "p(99)"],
    discardResponseBodies: false,
  };
}

export const httpOptions = () => scenarioOptions("http_req_duration", "http_req_failed");
export const grpcOptions = () => scenarioOptions("grpc_req_duration");

// loadtest/run.ts reads these markers on k6's output to time the CPU sample
// of the platform to the load itself, without k6's start-up and shut-down.
export function setup() {
  console.log("LOADTEST_LOAD_START");
}

export function teardown() {
  console.log("LOADTEST_LOAD_END");
}
