// Sign, convert and collect at once, each at a rate that follows stages of
// its own (k6's ramping-arrival-rate): the load the autoscaling test
// (test/e2e/kubernetes.test.ts) puts on a DocService through its gateway.
// Requests as in sign.js, convert.js and collect.js (the same variables).
//
//   SIGN_STAGES, CONVERT_STAGES, COLLECT_STAGES
//       "rate:seconds,rate:seconds,…": each stage goes linearly from the rate
//       before it (0 at the start) to `rate` requests per second (may be
//       fractional) over `seconds`; a route without stages gets no load
//   MAX_VUS   upper bound of virtual users per route, default 200
//   PRE_VUS   virtual users per route made before the load starts, default 10: when
//             every one is busy, k6 drops the iteration it had to start while it makes
//             another, so a rate times the longest wait it may meet sends everything
//
// No thresholds: the caller judges the requests from k6's per-request output
// (--out json), window by window.
import { collectRequest, convertRequest, signRequest } from "./lib/requests.js";
import { hosts } from "./lib/options.js";

const MAX_VUS = Number(__ENV.MAX_VUS || 200);
const PRE_VUS = Math.min(MAX_VUS, Number(__ENV.PRE_VUS || 10));

/** "60:30,60:90" as k6 stages; rates per minute, so fractional ones keep their precision. */
function stages(variable) {
  const raw = __ENV[variable] || "";
  return raw
    .split(",")
    .filter(Boolean)
    .map((stage) => {
      const [rate, seconds] = stage.split(":").map(Number);
      if (!(rate >= 0) || !(seconds > 0)) throw new Error(`${variable} must be "rate:seconds,…", got "${raw}"`);
      return { target: Math.round(rate * 60), duration: `${seconds}s` };
    });
}

const ROUTES = { sign: "SIGN_STAGES", convert: "CONVERT_STAGES", collect: "COLLECT_STAGES" };
const scenarios = {};
for (const [route, variable] of Object.entries(ROUTES)) {
  const routeStages = stages(variable);
  if (routeStages.length === 0) continue;
  scenarios[route] = {
    executor: "ramping-arrival-rate",
    exec: route,
    startRate: 0,
    timeUnit: "1m",
    stages: routeStages,
    preAllocatedVUs: PRE_VUS,
    maxVUs: MAX_VUS,
    // the last stage ends at rate 0 in a ramp down; what is still in flight then finishes
    gracefulStop: "90s",
  };
}

// k6 (Go's HTTP client) does not honour the Keep-Alive timeout a server advertises, so it may send on a
// connection in the instant the gateway closes it as idle, and get a reset where a client that honours
// it never does: each iteration opens its own connection (which kube-proxy also balances afresh).
export const options = { scenarios, hosts: hosts(), discardResponseBodies: true, noVUConnectionReuse: true };

export const sign = signRequest();
export const convert = convertRequest();
export const collect = collectRequest();
