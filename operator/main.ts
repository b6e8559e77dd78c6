/**
 * The DocService operator: elects a leader on a Lease; the leader watches
 * DocService resources and the children it manages, and reconciles each
 * namespace/name from a work queue (periodic resync, rate-limited retries).
 *
 *   KUBECONFIG / in-cluster  where the API server is
 *   WATCH_NAMESPACES         comma-separated namespaces; empty: all
 *   LEASE_NAMESPACE          namespace of the leader Lease (default: POD_NAMESPACE or "default")
 *   LEASE_NAME               default "docservice-operator"
 *   POD_NAME                 this replica's identity (default: host and pid)
 *   SIZING_PROFILE           sizing profile JSON (default: loadtest/sizing-profile.json)
 *   RESYNC_SECONDS           periodic resync (default 300)
 *   POD_MONITOR              "false": no PodMonitor per DocService (default "true": one where the Prometheus Operator's API is served)
 *   POD_MONITOR_INTERVAL     its scrape interval (default 30s)
 *   POD_MONITOR_LABELS       its labels, a JSON object (default {})
 *   EXTERNAL_METRICS_PORT    serve the external metrics API (conversion demand) on this port; unset: not served
 *   EXTERNAL_METRICS_TLS_DIR its serving certificate, tls.crt and tls.key
 *   EXTERNAL_METRICS_SERVICE "namespace/name" of the Service its APIService names
 *   EXTERNAL_METRICS_HOST    the address it listens on (default 0.0.0.0: the API server calls it; only its front proxy is answered)
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { KubeConfig, Watch } from "@kubernetes/client-node";
import { CONVERSION_DEMAND_METRIC, ConversionDemand } from "./conversion-demand.js";
import { GROUP, PLURAL, VERSION } from "./crd.js";
import { metricsTokenSecretName } from "./desired-state.js";
import { startExternalMetricsApi } from "./external-metrics-api.js";
import { KubeApi } from "./kube-api.js";
import { LeaderElection } from "./leader-election.js";
import { Reconciler } from "./reconciler.js";
import type { SizingProfile } from "./sizing.js";
import { WorkQueue } from "./work-queue.js";

const log = (message: string, fields: object = {}) => console.log(JSON.stringify({ time: new Date().toISOString(), message, ...fields }));

/** Children of a DocService, found by the label every child carries. */
const CHILD_PATHS = [
  "/apis/apps/v1/deployments",
  "/api/v1/services",
  "/api/v1/configmaps",
  "/apis/policy/v1/poddisruptionbudgets",
  "/apis/autoscaling/v2/horizontalpodautoscalers",
];
const SCALED_OBJECTS = "/apis/keda.sh/v1alpha1/scaledobjects";
const MANAGED = "app.kubernetes.io/managed-by=docservice-operator";
const WATCH_RESTART_MS = 1000;

interface WatchedObject {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
}

function settings() {
  const env = process.env;
  return {
    namespaces: (env.WATCH_NAMESPACES ?? "").split(",").map((n) => n.trim()).filter(Boolean),
    leaseNamespace: env.LEASE_NAMESPACE || env.POD_NAMESPACE || "default",
    leaseName: env.LEASE_NAME || "docservice-operator",
    identity: env.POD_NAME || `${hostname()}-${process.pid}`,
    profilePath: env.SIZING_PROFILE || new URL("../loadtest/sizing-profile.json", import.meta.url).pathname,
    resyncMs: Number(env.RESYNC_SECONDS ?? 300) * 1000,
    podMonitor: env.POD_MONITOR === "false" ? undefined : { interval: env.POD_MONITOR_INTERVAL || "30s", labels: JSON.parse(env.POD_MONITOR_LABELS || "{}") as Record<string, string> },
    externalMetrics: env.EXTERNAL_METRICS_PORT
      ? {
          port: Number(env.EXTERNAL_METRICS_PORT),
          host: env.EXTERNAL_METRICS_HOST || "0.0.0.0",
          tlsDir: env.EXTERNAL_METRICS_TLS_DIR || "/etc/docservice-operator/external-metrics-tls",
          service: env.EXTERNAL_METRICS_SERVICE || undefined,
        }
      : undefined,
  };
}

const INSTANCE = "app.kubernetes.io/instance";

/** The demand of the DocService the HPA's selector names, from its running conversion pods. */
async function conversionDemandOf(demand: ConversionDemand, api: KubeApi, namespace: string, selector: Record<string, string>): Promise<number> {
  const instance = selector[INSTANCE];
  if (!instance) throw new Error(`the metric selector names no ${INSTANCE}`);
  const pods = await api.listPods(namespace, `${INSTANCE}=${instance},app.kubernetes.io/component=conversion`);
  const targets = pods.flatMap((pod) => {
    const port = pod.spec?.containers.flatMap((container) => container.ports ?? []).find((p) => p.name === "metrics")?.containerPort;
    const ready = pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True");
    // a terminating pod finishes what it holds; new work goes elsewhere
    if (!port || !ready || !pod.status?.podIP || pod.metadata?.deletionTimestamp) return [];
    const run = `${pod.metadata?.uid}/${pod.status.containerStatuses?.[0]?.restartCount ?? 0}`;
    return [{ pod: pod.metadata?.name ?? "", run, url: `http://${pod.status.podIP}:${port}/metrics` }];
  });
  const token = (await api.readSecretData(namespace, metricsTokenSecretName(instance)))?.token;
  if (!token) throw new Error(`no metrics token in Secret ${metricsTokenSecretName(instance)}`);
  return demand.read(targets, token);
}

async function serveExternalMetrics(api: KubeApi, settings: { port: number; host: string; tlsDir: string }): Promise<void> {
  const demand = new ConversionDemand();
  // the API server's front proxy: the CA of its client certificate and the names it may have
  const authentication = await api.readConfigMapData("kube-system", "extension-apiserver-authentication");
  const clientCa = authentication?.["requestheader-client-ca-file"];
  if (!clientCa) throw new Error("kube-system/extension-apiserver-authentication has no requestheader-client-ca-file: the API server is not set up for aggregated APIs");
  await startExternalMetricsApi({
    host: settings.host,
    port: settings.port,
    cert: readFileSync(join(settings.tlsDir, "tls.crt"), "utf8"),
    key: readFileSync(join(settings.tlsDir, "tls.key"), "utf8"),
    clientCa,
    allowedNames: JSON.parse(authentication["requestheader-allowed-names"] || "[]") as string[],
    metrics: [{ name: CONVERSION_DEMAND_METRIC, value: (namespace, selector) => conversionDemandOf(demand, api, namespace, selector) }],
    log,
  });
  log("serving the external metrics API", { port: settings.port });
}

/** Watches one path until stopped, restarting whenever the server ends the watch. */
function keepWatching(config: KubeConfig, path: string, query: Record<string, string>, onEvent: (object: WatchedObject) => void): () => void {
  let stopped = false;
  let controller: AbortController | undefined;
  const start = async () => {
    if (stopped) return;
    const restart = () => setTimeout(() => void start(), WATCH_RESTART_MS).unref();
    try {
      controller = await new Watch(config).watch(path, query, (_phase, object: WatchedObject) => onEvent(object), () => {
        if (!stopped) restart();
      });
    } catch (error) {
      if (!stopped) {
        log("watch failed; retrying", { path, error: (error as Error).message });
        restart();
      }
    }
  };
  void start();
  return () => {
    stopped = true;
    controller?.abort();
  };
}

function namespacedPaths(path: string, namespaces: string[]): string[] {
  if (namespaces.length === 0) return [path];
  const [, prefix, resource] = /^(.*)\/([^/]+)$/.exec(path)!;
  return namespaces.map((namespace) => `${prefix}/namespaces/${namespace}/${resource}`);
}

async function main(): Promise<void> {
  const options = settings();
  const config = new KubeConfig();
  config.loadFromDefault();
  const api = new KubeApi(config);
  const profile = JSON.parse(readFileSync(options.profilePath, "utf8")) as SizingProfile;
  // every replica serves the metrics (they are read fresh from the pods), leader or not
  let externalMetricsService: string | undefined;
  if (options.externalMetrics) {
    try {
      await serveExternalMetrics(api, options.externalMetrics);
      externalMetricsService = options.externalMetrics.service;
    } catch (error) {
      // reconciling matters more: conversion then scales on CPU, and this replica is never ready for the APIService's Service
      log("external metrics API not served", { error: (error as Error).message });
    }
  }
  const reconciler = new Reconciler({ api, profile, podMonitor: options.podMonitor, externalMetricsService, log });

  let queue: WorkQueue | undefined;
  let stopWatches: (() => void)[] = [];
  const enqueue = (namespace: string | undefined, name: string | undefined) => {
    if (namespace && name) queue?.add(`${namespace}/${name}`);
  };

  const startLeading = () => {
    log("leading: reconciling", { identity: options.identity, namespaces: options.namespaces.length ? options.namespaces : "all" });
    queue = new WorkQueue({
      concurrency: 4,
      baseRetryMs: 500,
      maxRetryMs: 60_000,
      resyncMs: options.resyncMs,
      handle: async (key) => {
        const [namespace, name] = key.split("/");
        await reconciler.reconcile(namespace, name);
      },
      onError: (key, error, retryInMs) => log("reconcile failed", { key, error: (error as Error).message, retryInMs }),
    });
    const watch = (path: string, query: Record<string, string>, key: (object: WatchedObject) => void) =>
      namespacedPaths(path, options.namespaces).forEach((p) => stopWatches.push(keepWatching(config, p, query, key)));
    const watchChildren = (path: string) =>
      watch(path, { labelSelector: MANAGED }, (o) => enqueue(o.metadata?.namespace, o.metadata?.labels?.["app.kubernetes.io/instance"]));
    watch(`/apis/${GROUP}/${VERSION}/${PLURAL}`, {}, (o) => enqueue(o.metadata?.namespace, o.metadata?.name));
    CHILD_PATHS.forEach(watchChildren);
    // ScaledObjects only exist with KEDA installed; watching a missing API would fail forever
    void api.crdInstalled("scaledobjects.keda.sh").then((installed) => installed && queue && watchChildren(SCALED_OBJECTS), () => {});
  };
  const stopLeading = () => {
    log("not leading", { identity: options.identity });
    stopWatches.forEach((stop) => stop());
    stopWatches = [];
    queue?.stop();
    queue = undefined;
  };

  const election = new LeaderElection(api.leaseStore(options.leaseNamespace, options.leaseName), {
    identity: options.identity,
    leaseDurationSeconds: 15,
    retryPeriodMs: 2000,
    onStartedLeading: startLeading,
    onStoppedLeading: stopLeading,
  });
  election.start();
  log("operator started", { identity: options.identity, lease: `${options.leaseNamespace}/${options.leaseName}` });

  const shutdown = async () => {
    await election.stop(); // stops leading, and frees the Lease for another replica
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown());
  process.on("SIGINT", () => void shutdown());
}

main().catch((error: unknown) => {
  console.error("operator failed to start:", error);
  process.exit(1);
});
