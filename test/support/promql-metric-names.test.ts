import assert from "node:assert/strict";
import { test } from "node:test";
import { promqlReferences } from "./promql-metric-names.js";

test("metric names of PromQL expressions, without functions, keywords, labels, strings or durations", () => {
  const cases: [string, string[]][] = [
    ["up", ["up"]],
    ['http_requests_total{job="api", route=~"/v1/(sign|verify)"}', ["http_requests_total"]],
    ['sum by (namespace, route) (rate(a_total{status=~"5.."}[5m])) / sum by (namespace, route) (rate(a_total[5m])) > 0.05', ["a_total"]],
    ["histogram_quantile(0.95, sum(rate(d_seconds_bucket[$__rate_interval])) by (le, route))", ["d_seconds_bucket"]],
    ["sum without (pod) (x) and on (namespace) group_left (team) y unless z or w", ["w", "x", "y", "z"]],
    ["min by (certificate) (expiry_seconds) - time() < 21 * 86400", ["expiry_seconds"]],
    ['label_replace(m{namespace="$namespace"}, "dst", "$1", "src", "(.*)")', ["m"]],
    ["rate(m[5m] offset 1h30m) + deriv(n[10m:1m])", ["m", "n"]],
    ['count_values("version", build_info) > Inf', ["build_info"]],
  ];
  for (const [expr, names] of cases) assert.deepEqual(promqlReferences(expr), { names, errors: [] }, expr);
});

test("an expression that is not PromQL is reported where it breaks", () => {
  for (const expr of ["sum(rate(m[5m])", "rate(m[5x])", "m{a=}", "sum by (a b) (m)"]) {
    assert.notDeepEqual(promqlReferences(expr).errors, [], expr);
  }
});
