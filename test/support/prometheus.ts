// A real Prometheus for the tests (Debian's package, installed by
// scripts/testenv/setup.sh), scraping the pods of a cluster as the Prometheus
// Operator would for a PodMonitor. Debian builds Prometheus without Kubernetes
// service discovery, so the discovery is done here, by the rules the operator
// gives Prometheus for a PodMonitor (its label selector, namespaces and port
// name; targets labelled namespace, pod, container, endpoint and job), and
// handed to Prometheus as file-based discovery. Scraping, rule evaluation and
// alerting are Prometheus's own. Not a test file itself.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDaemon } from "./daemon.js";
import { freePort } from "./ports.js";
import { canConnect } from "./wait.js";

/** The parts of a monitoring.coreos.com/v1 PodMonitor that the chart's uses. */
export interface PodMonitor {
  metadata: { name: string; namespace: string };
  spec: {
    selector: { matchLabels?: Record<string, string> };
    namespaceSelector?: { any?: boolean; matchNames?: string[] };
    podMetricsEndpoints: { port: string; path?: string; interval?: string; authorization?: { type?: string; credentials: SecretKey } }[];
  };
}

/** A key of a Secret in the monitor's namespace. */
export interface SecretKey {
  name: string;
  key: string;
}

/** The parts of a Pod read for discovery. */
export interface Pod {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: { containers: { name: string; ports?: { name?: string; containerPort: number }[] }[] };
  status: { phase?: string; podIP?: string };
}

/**
 * One scrape config per endpoint of the monitor, as the Prometheus Operator
 * generates them, its targets read from `targetsDir`; an endpoint's
 * authorization is the Secret's value (`secret` reads it, as the operator does).
 */
export function podMonitorScrapeConfigs(monitor: PodMonitor, targetsDir: string, secret: (ref: SecretKey) => string): object[] {
  return monitor.spec.podMetricsEndpoints.map((endpoint, index) => ({
    job_name: `podMonitor/${monitor.metadata.namespace}/${monitor.metadata.name}/${index}`,
    metrics_path: endpoint.path ?? "/metrics",
    ...(endpoint.authorization ? { authorization: { type: endpoint.authorization.type ?? "Bearer", credentials: secret(endpoint.authorization.credentials) } } : {}),
    ...(endpoint.interval ? { scrape_interval: endpoint.interval, scrape_timeout: endpoint.interval } : {}),
    file_sd_configs: [{ files: [join(targetsDir, `${index}.json`)], refresh_interval: "5s" }],
  }));
}

/**
 * Writes the targets of each endpoint of the monitor among `pods`: a running
 * pod in a selected namespace whose labels match, on each container port
 * with the endpoint's name.
 */
export function writePodMonitorTargets(monitor: PodMonitor, pods: Pod[], targetsDir: string): void {
  const { metadata, spec } = monitor;
  const namespaces = spec.namespaceSelector?.any ? undefined : (spec.namespaceSelector?.matchNames ?? [metadata.namespace]);
  const selected = pods.filter(
    (pod) =>
      (!namespaces || namespaces.includes(pod.metadata.namespace)) &&
      Object.entries(spec.selector.matchLabels ?? {}).every(([name, value]) => pod.metadata.labels?.[name] === value) &&
      pod.status.phase === "Running" &&
      pod.status.podIP,
  );
  spec.podMetricsEndpoints.forEach((endpoint, index) => {
    const groups = selected.flatMap((pod) =>
      pod.spec.containers.flatMap((container) =>
        (container.ports ?? [])
          .filter((port) => port.name === endpoint.port)
          .map((port) => ({
            targets: [`${pod.status.podIP}:${port.containerPort}`],
            labels: { namespace: pod.metadata.namespace, pod: pod.metadata.name, container: container.name, endpoint: endpoint.port, job: `${metadata.namespace}/${metadata.name}` },
          })),
      ),
    );
    writeFileSync(join(targetsDir, `${index}.json`), JSON.stringify(groups));
  });
}

export interface PromAlert {
  labels: Record<string, string>;
  /** "pending" or "firing"; an alert that is neither is not listed. */
  state: string;
}

export interface Prometheus {
  /** An instant query; resolves with its result vector (throws on a query Prometheus refuses). */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** The alerts pending or firing now. */
  alerts(): Promise<PromAlert[]>;
  /** Its scrape targets, for failure messages: job, URL, health and last error of each. */
  targets(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts Prometheus on loopback with these scrape configs and rule files, scraping and evaluating every `intervalS` seconds. */
export async function startPrometheus(options: { scrapeConfigs: object[]; ruleFiles: string[]; intervalS: number }): Promise<Prometheus> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const daemon = await startDaemon({
    name: `prometheus-${port}`,
    command: "prometheus",
    args: (dir) => {
      const config = {
        global: { scrape_interval: `${options.intervalS}s`, evaluation_interval: `${options.intervalS}s`, scrape_timeout: `${options.intervalS}s` },
        rule_files: options.ruleFiles,
        scrape_configs: options.scrapeConfigs,
      };
      // JSON is YAML, which is what Prometheus reads.
      writeFileSync(join(dir, "prometheus.yml"), JSON.stringify(config));
      return [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"];
    },
    ready: async () => (await canConnect(port)) && (await fetch(`${base}/-/ready`)).ok,
    timeoutMs: 60_000,
  });
  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${base}/api/v1/${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`Prometheus ${path}: ${body.error ?? response.status}`);
    return body.data;
  };
  return {
    query: async (expr) => (await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(`query?query=${encodeURIComponent(expr)}`)).result,
    alerts: async () => (await api<{ alerts: PromAlert[] }>("alerts")).alerts,
    targets: async () =>
      (await api<{ activeTargets: { scrapePool: string; scrapeUrl: string; health: string; lastError: string }[] }>("targets")).activeTargets
        .map((t) => `${t.scrapePool} ${t.scrapeUrl} ${t.health}${t.lastError ? ` (${t.lastError})` : ""}`)
        .join("\n"),
    stop: () => daemon.stop(),
  };
}

export interface RuleGroup {
  name: string;
  rules: Record<string, unknown>[];
}

/**
 * Alert rules with every `for:` set to `pending`: the rules as shipped,
 * except how long a condition must hold, so that a test drives an alert to
 * firing in seconds (promtool test rules checks the real durations).
 */
export function withShortPending(groups: RuleGroup[], pending: string): RuleGroup[] {
  return groups.map((group) => ({ ...group, rules: group.rules.map((rule) => ("for" in rule ? { ...rule, for: pending } : rule)) }));
}
