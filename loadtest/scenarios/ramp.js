// Sign, convert and collect at once, each following stages of its own: the
// load the autoscaling test (test/e2e/kubernetes.test.ts) puts on a DocService
// through its gateway. Requests as in sign.js, convert.js and collect.js (the
// same variables).
//
//   SIGN_STAGES, CONVERT_STAGES, COLLECT_STAGES
//       "rate:seconds,rate:seconds,…" (k6's ramping-arrival-rate): each stage
//       goes linearly from the rate before it (0 at the start) to `rate`
//       requests per second (may be fractional) over `seconds`
//   SIGN_USER_STAGES, CONVERT_USER_STAGES, COLLECT_USER_STAGES
//       "users:seconds,users:seconds,…" (k6's ramping-vus): virtual users that
//       each send the route's requests back to back, from the number before
//       (0 at the start) to `users` over `seconds`. Both kinds of a route run
//       at once, each timed from the start
//   A route without stages gets no load.
//   CONTROL_URL  optional: from CONTROL_FROM_S seconds into the run, each
//             virtual user asks it (at most once a second) before its request
//             whether the load was ended early; once it answers 410, no
//             iteration sends anything, so the caller (test/support/k6-ramp.ts)
//             can stop k6 with no request in flight. Tagged "load control".
//   MAX_VUS   upper bound of virtual users per rate, default 200
//   PRE_VUS   virtual users per rate made before the load starts, default 10: when
//             every one is busy, k6 drops the iteration it had to start while it makes
//             another, so a rate times the longest wait it may meet sends everything
//
// Each route's scenarios are named after it (the users' with "_users" after
// the route). No thresholds: the caller judges the requests from k6's
// per-request output (--out json), window by window.
import exec from "k6/execution";
import http from "k6/http";
import { collectRequest, convertRequest, signRequest } from "./lib/requests.js";
import { hosts } from "./lib/options.js";

const MAX_VUS = Number(__ENV.MAX_VUS || 200);
const PRE_VUS = Math.min(MAX_VUS, Number(__ENV.PRE_VUS || 10));

/** "60:30,60:90" as k6 stages of `scale` times each target (rates per minute, so fractional ones keep their precision). */
function stages(variable, scale) {
  const raw = __ENV[variable] || "";
  return raw
    .split(",")
    .filter(Boolean)
    .map((stage) => {
      const [target, seconds] = stage.split(":").map(Number);
      if (!(target >= 0) || !(seconds > 0)) throw new Error(`${variable} must be "target:seconds,…", got "${raw}"`);
      return { target: Math.round(target * scale), duration: `${seconds}s` };
    });
}

// what is still in flight when a stage ends at 0 finishes
const GRACE = "90s";
const scenarios = {};
for (const route of ["sign", "convert", "collect"]) {
  const rates = stages(`${route.toUpperCase()}_STAGES`, 60);
  if (rates.length > 0) {
    scenarios[route] = {
      executor: "ramping-arrival-rate",
      exec: route,
      startRate: 0,
      timeUnit: "1m",
      stages: rates,
      preAllocatedVUs: PRE_VUS,
      maxVUs: MAX_VUS,
      gracefulStop: GRACE,
    };
  }
  const users = stages(`${route.toUpperCase()}_USER_STAGES`, 1);
  if (users.length > 0) {
    scenarios[`${route}_users`] = { executor: "ramping-vus", exec: route, startVUs: 0, stages: users, gracefulRampDown: GRACE, gracefulStop: GRACE };
  }
}

// k6 (Go's HTTP client) does not honour the Keep-Alive timeout a server advertises, so it may send on a
// connection in the instant the gateway closes it as idle, and get a reset where a client that honours
// it never does: each iteration opens its own connection (which kube-proxy also balances afresh).
export const options = { scenarios, hosts: hosts(), discardResponseBodies: true, noVUConnectionReuse: true };

const CONTROL_URL = __ENV.CONTROL_URL || "";
const CONTROL_FROM_MS = Number(__ENV.CONTROL_FROM_S || 0) * 1000;
let ended = false;
let askedAt = 0;

/** Whether the caller ended the load (CONTROL_URL above); this virtual user's answer is kept for a second. */
function loadEnded() {
  if (!CONTROL_URL || ended || exec.instance.currentTestRunDuration < CONTROL_FROM_MS || Date.now() - askedAt < 1000) return ended;
  askedAt = Date.now();
  ended = http.get(CONTROL_URL, { tags: { name: "load control" } }).status === 410;
  return ended;
}

const signOnce = signRequest();
const convertOnce = convertRequest();
const collectOnce = collectRequest();
export const sign = () => loadEnded() || signOnce();
export const convert = () => loadEnded() || convertOnce();
export const collect = () => loadEnded() || collectOnce();
