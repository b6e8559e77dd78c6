/**
 * What a PromQL expression of a dashboard or a rule file refers to, read with
 * Prometheus's own grammar (@prometheus-io/lezer-promql, the parser of its
 * web UI): the metric names of its selectors, and where it does not parse.
 * Grafana's interval variables are not PromQL and are replaced by a duration
 * first; a selector naming its metric only as `{__name__="..."}` is not seen.
 */
import { parser } from "@prometheus-io/lezer-promql";

export interface PromqlReferences {
  /** Distinct metric names, sorted. */
  names: string[];
  /** The text of each part that does not parse (empty: a valid expression). */
  errors: string[];
}

const GRAFANA_INTERVALS = /\$__(?:rate_interval|interval|range)\b|\$\{__(?:rate_interval|interval|range)\}/g;

export function promqlReferences(expr: string): PromqlReferences {
  const text = expr.replace(GRAFANA_INTERVALS, "5m");
  const names = new Set<string>();
  const errors: string[] = [];
  parser.parse(text).iterate({
    enter(node) {
      if (node.type.isError) errors.push(text.slice(Math.max(0, node.from - 10), node.to + 10) || "(end)");
      if (node.name !== "VectorSelector") return;
      const identifier = node.node.getChild("Identifier");
      if (identifier) names.add(text.slice(identifier.from, identifier.to));
    },
  });
  return { names: [...names].sort(), errors };
}
