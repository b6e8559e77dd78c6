/**
 * Every PromQL query the operator's chart ships: its alerts' expressions and
 * its dashboard's (panels, and the namespace variable's metric), each with
 * where it stands. Not a test file itself.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";

const CHART_FILES = new URL("../../charts/docservice-operator/files/", import.meta.url);

export interface MonitoringQuery {
  where: string;
  expr: string;
}

interface Panel {
  title: string;
  targets?: { expr: string }[];
}

export function monitoringQueries(): MonitoringQuery[] {
  const alerts = parse(readFileSync(new URL("alerts.yaml", CHART_FILES), "utf8")) as { groups: { rules: { alert: string; expr: string }[] }[] };
  const dashboard = JSON.parse(readFileSync(new URL("dashboard.json", CHART_FILES), "utf8")) as {
    panels: Panel[];
    templating: { list: { name: string; query: string | { query: string } }[] };
  };
  const variable = dashboard.templating.list.find((v) => v.name === "namespace")!.query;
  return [
    ...alerts.groups.flatMap((group) => group.rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr }))),
    ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map(({ expr }) => ({ where: `dashboard panel "${panel.title}"`, expr }))),
    // label_values(METRIC, LABEL) is Grafana's, not PromQL: its first argument is the query
    { where: "dashboard variable namespace", expr: /^label_values\((.+),\s*\w+\)$/.exec(typeof variable === "string" ? variable : variable.query)![1]! },
  ];
}
