// The monitoring the operator's chart ships (charts/docservice-operator/files/):
// its alerts checked and unit-tested by promtool (scripts/testenv/setup.sh),
// every query of the alerts and the dashboard parsed as PromQL (the names they
// use are checked against a running platform in platform-metrics.test.ts),
// and the chart's PodMonitor, PrometheusRule and dashboard ConfigMap rendered,
// then applied to a real kube-apiserver with the Prometheus Operator's CRDs.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { parse, parseAllDocuments } from "yaml";
import { cacheBin } from "../support/cache.js";
import { kubectl, prometheusOperatorCrdsFile, startKubeApiServer, waitForCrds, type KubeApiServer } from "../support/kube.js";
import { monitoringQueries } from "../support/monitoring-queries.js";
import { promqlReferences } from "../support/promql-metric-names.js";
import { runCommand } from "../support/run-command.js";

const run = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;
const CHART = join(ROOT, "charts/docservice-operator");
const ALERTS_FILE = "charts/docservice-operator/files/alerts.yaml";
const ALERTS_TESTS = "test/monitoring/alerts.test.yaml";
const DASHBOARD_TEXT = readFileSync(join(CHART, "files/dashboard.json"), "utf8");

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
const ALERTS = parse(readFileSync(join(ROOT, ALERTS_FILE), "utf8")) as { groups: { name: string; rules: Rule[] }[] };
const RULES = ALERTS.groups.flatMap((group) => group.rules);

interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string }[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
}
const DASHBOARD = JSON.parse(DASHBOARD_TEXT) as { schemaVersion: number; panels: Panel[]; templating: { list: Variable[] } };

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}
const helm = async (args: string[]) => (await run(cacheBin("helm"), args, { maxBuffer: 16 * 1024 * 1024 })).stdout;
/** The chart's objects, as `helm template` renders them (with the Prometheus Operator's API if `monitoringApi`). */
async function render(monitoringApi: boolean, ...sets: string[]): Promise<K8sObject[]> {
  const api = monitoringApi ? ["--api-versions", "monitoring.coreos.com/v1"] : [];
  const out = await helm(["template", "ops", CHART, "--namespace", "docservice-system", "--kube-version", "1.34.0", ...api, ...sets.flatMap((s) => ["--set", s])]);
  return parseAllDocuments(out)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}
const ofKind = (objects: K8sObject[], kind: string) => objects.filter((object) => object.kind === kind);

async function promtool(args: string[]): Promise<{ code: number | null; output: string }> {
  return runCommand("promtool", args, { cwd: ROOT, timeoutMs: 60_000 }).catch((error: NodeJS.ErrnoException) =>
    Promise.reject(error.code === "ENOENT" ? new Error("promtool not found on PATH: run scripts/testenv/setup.sh") : error),
  );
}

describe("the chart's alerts", () => {
  test("promtool check rules accepts the file as it is", async () => {
    const { code, output } = await promtool(["check", "rules", ALERTS_FILE]);
    assert.equal(code, 0, output);
    assert.match(output, new RegExp(`SUCCESS: ${RULES.length} rules found`));
  });

  test("promtool test rules passes test/monitoring/alerts.test.yaml", async () => {
    const { code, output } = await promtool(["test", "rules", ALERTS_TESTS]);
    assert.equal(code, 0, output);
    assert.match(output, /SUCCESS/);
  });

  test("every alert is tested firing, and only alerts of the file are tested", () => {
    interface AlertTest {
      alertname: string;
      exp_alerts?: unknown[];
    }
    const tests = parse(readFileSync(join(ROOT, ALERTS_TESTS), "utf8")) as { rule_files: string[]; tests: { alert_rule_test?: AlertTest[] }[] };
    assert.deepEqual(tests.rule_files, [`../../${ALERTS_FILE}`]);
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    const alerts = new Set(RULES.map((rule) => rule.alert));
    // A misspelt name would pass promtool as an alert that never fires.
    for (const { alertname } of cases) assert.ok(alerts.has(alertname), `${ALERTS_TESTS} tests ${alertname}, which ${ALERTS_FILE} lacks`);
    const firing = new Set(cases.filter((c) => (c.exp_alerts ?? []).length > 0).map((c) => c.alertname));
    assert.deepEqual([...alerts].filter((alert) => !firing.has(alert)), [], "alerts no test case expects to fire");
  });

  test("each alert has a severity, a summary, a description and its runbook, and keeps instances apart by namespace", () => {
    assert.deepEqual(ALERTS.groups.map((group) => group.name), ["docservice"]);
    for (const rule of RULES) {
      assert.match(rule.labels?.severity ?? "", /^(warning|critical)$/, rule.alert);
      assert.ok(rule.annotations?.summary && rule.annotations.description, `${rule.alert}: summary and description`);
      assert.equal(rule.annotations.runbook, `docs/operations/alerts.md#${rule.alert.toLowerCase()}`);
      const groupings = [...rule.expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)];
      assert.ok(groupings.length > 0, `${rule.alert} aggregates`);
      for (const [clause, labels] of groupings) assert.ok(/^by/.test(clause) && labels!.split(",").map((l) => l.trim()).includes("namespace"), `${rule.alert}: ${clause}`);
    }
  });
});

describe("the chart's dashboard", () => {
  test("is a schema 39 dashboard on a Prometheus data source variable, per namespace, one row per part of the platform", () => {
    assert.equal(DASHBOARD.schemaVersion, 39);
    const variables = Object.fromEntries(DASHBOARD.templating.list.map((v) => [v.name, v]));
    assert.deepEqual([variables.datasource?.type, variables.datasource?.query], ["datasource", "prometheus"]);
    assert.equal(variables.namespace?.type, "query");
    assert.deepEqual(
      DASHBOARD.panels.filter((panel) => panel.type === "row").map((row) => row.title),
      ["Requests", "gRPC", "Signing", "Conversion", "Usage", "Certificates"],
    );
    for (const panel of DASHBOARD.panels.filter((p) => p.type !== "row")) {
      assert.deepEqual(panel.datasource, { type: "prometheus", uid: "${datasource}" }, panel.title);
      assert.ok(panel.targets?.length, `${panel.title} has queries`);
      for (const { expr } of panel.targets!) assert.match(expr, /namespace="\$namespace"/, `${panel.title}: ${expr}`);
    }
  });
});

test("every query of the alerts and the dashboard is valid PromQL naming at least one metric", () => {
  for (const { where, expr } of monitoringQueries()) {
    const { names, errors } = promqlReferences(expr);
    assert.deepEqual(errors, [], `${where}: ${expr}`);
    assert.ok(names.length > 0, `${where}: no metric in ${expr}`);
  }
});

describe("the chart's monitoring objects", () => {
  let kube: KubeApiServer;
  before(async () => {
    kube = await startKubeApiServer();
  });
  after(() => kube?.stop());

  test("without the Prometheus Operator's API there is no PodMonitor or PrometheusRule, only the dashboard", async () => {
    const objects = await render(false);
    assert.deepEqual([...ofKind(objects, "PodMonitor"), ...ofKind(objects, "PrometheusRule")], []);
    assert.deepEqual(
      ofKind(objects, "ConfigMap").map((c) => c.metadata.name),
      ["ops-dashboard"],
    );
  });

  test("with it, the PrometheusRule's spec is the alerts file; the PodMonitors are the operator's, one per DocService, as the values say", async () => {
    const objects = await render(true, "monitoring.prometheusRule.labels.release=kps");
    const [rule, ...moreRules] = ofKind(objects, "PrometheusRule");
    assert.deepEqual(moreRules, []);
    assert.equal(rule!.apiVersion, "monitoring.coreos.com/v1");
    assert.deepEqual(rule!.spec, ALERTS);
    assert.equal(rule!.metadata.labels?.release, "kps");
    // a PodMonitor needs its DocService's token Secret, in that DocService's namespace: the operator writes it there
    assert.deepEqual(ofKind(objects, "PodMonitor"), []);
    const operatorEnv = async (...sets: string[]) => {
      const [deployment] = ofKind(await render(true, ...sets), "Deployment") as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } }[];
      return Object.fromEntries(deployment!.spec.template.spec.containers[0]!.env.filter((e) => e.name.startsWith("POD_MONITOR")).map((e) => [e.name, e.value]));
    };
    assert.deepEqual(await operatorEnv(), { POD_MONITOR: "true", POD_MONITOR_INTERVAL: "30s", POD_MONITOR_LABELS: "{}" });
    assert.deepEqual(await operatorEnv("monitoring.podMonitor.interval=15s", "monitoring.podMonitor.labels.release=kps", "monitoring.podMonitor.enabled=false"), {
      POD_MONITOR: "false",
      POD_MONITOR_INTERVAL: "15s",
      POD_MONITOR_LABELS: '{"release":"kps"}',
    });
    const disabled = await render(true, "monitoring.prometheusRule.enabled=false", "monitoring.dashboard.enabled=false");
    assert.deepEqual(disabled.filter((o) => ["PrometheusRule", "ConfigMap"].includes(o.kind)), []);
  });

  test("the dashboard ConfigMap holds the dashboard JSON unchanged, labelled for Grafana's sidecar", async () => {
    const [configMap] = ofKind(await render(true), "ConfigMap");
    assert.equal(configMap!.metadata.labels?.grafana_dashboard, "1");
    assert.equal(configMap!.metadata.namespace, "docservice-system");
    assert.equal(configMap!.data?.["docservice.json"], DASHBOARD_TEXT);
  });

  test("the rendered objects are valid for the Prometheus Operator's CRDs on a kube-apiserver", async () => {
    await kubectl(kube, ["apply", "--server-side", "-f", prometheusOperatorCrdsFile()]);
    await waitForCrds(kube, ["podmonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com"]);
    await kubectl(kube, ["create", "namespace", "docservice-system"]);
    await kubectl(kube, ["create", "namespace", "apps"]);
    const rendered = await helm(["template", "ops", CHART, "--namespace", "docservice-system", "--kube-version", "1.34.0", "--api-versions", "monitoring.coreos.com/v1", "--set", "watchNamespaces={apps}"]);
    // kubectl validates strictly: a field the CRD's schema lacks is an error.
    await kubectl(kube, ["apply", "-f", "-"], { input: rendered });
    const got = JSON.parse(await kubectl(kube, ["get", "prometheusrules,configmaps", "-n", "docservice-system", "-l", "app.kubernetes.io/instance=ops", "-o", "json"])) as { items: K8sObject[] };
    assert.deepEqual(got.items.map((o) => `${o.kind}/${o.metadata.name}`).sort(), ["ConfigMap/ops-dashboard", "PrometheusRule/ops"]);
    assert.deepEqual(got.items.find((o) => o.kind === "PrometheusRule")!.spec, ALERTS);
  });
});
