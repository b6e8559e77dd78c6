// KEDA on the control plane alone (test/support/keda.ts): its operator turns a
// ScaledObject into an HPA, and the external metrics API that the HPA reads
// answers through the API server with what the trigger's source says.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { startKeda, type Keda } from "../support/keda.js";
import { kubectl, startKubeApiServer, type KubeApiServer } from "../support/kube.js";
import { hostAddress } from "../support/kube-node-host.js";
import { waitFor } from "../support/wait.js";

const address = hostAddress();
if (!address) console.error("\n!! SKIPPED: KEDA on the control plane. This machine has no IPv4 address besides loopback.\n");

const NAME = "web";
/** What KEDA calls the metric of a metrics-api trigger, first of its ScaledObject, reading `valueLocation: value`. */
const METRIC = "s0-metric-api-value";

describe("KEDA next to the control plane", { skip: address ? false : "no IPv4 address besides loopback", timeout: 5 * 60_000 }, () => {
  let kube: KubeApiServer | undefined;
  let keda: Keda | undefined;
  let source: Server | undefined;
  /** What the trigger's source answers: {"value": N}. */
  let value = 7;
  let startupMs = 0;

  before(async () => {
    source = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ value }));
    });
    await new Promise<void>((resolve) => source!.listen(0, "127.0.0.1", resolve));
    kube = await startKubeApiServer({ aggregatedApis: true });
    const started = Date.now();
    keda = await startKeda({ ...kube, address: address! });
    startupMs = Date.now() - started;
  });
  after(async () => {
    try {
      await keda?.stop();
    } finally {
      await kube?.stop();
      source?.close();
    }
  });

  test("a ScaledObject gets its HPA, which reads the trigger's value through the API server", async (t) => {
    t.diagnostic(`KEDA started in ${startupMs} ms`);
    const url = `http://127.0.0.1:${(source!.address() as AddressInfo).port}/`;
    const labels = { app: NAME };
    // Nothing runs its pods (no node): KEDA reads and sets only its scale.
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: NAME, namespace: "default" },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: "web", image: "docservice.local/none:test" }] } },
      },
    };
    const scaledObject = {
      apiVersion: "keda.sh/v1alpha1",
      kind: "ScaledObject",
      metadata: { name: NAME, namespace: "default" },
      spec: {
        scaleTargetRef: { name: NAME },
        minReplicaCount: 1,
        maxReplicaCount: 5,
        triggers: [{ type: "metrics-api", metadata: { url, valueLocation: "value", targetValue: "5" } }],
      },
    };
    await kubectl(kube!, ["apply", "-f", "-"], { input: JSON.stringify({ apiVersion: "v1", kind: "List", items: [deployment, scaledObject] }) });

    interface Hpa {
      spec: {
        scaleTargetRef: { apiVersion: string; kind: string; name: string };
        metrics: { type: string; external?: { metric: { name: string; selector: { matchLabels: Record<string, string> } } } }[];
      };
    }
    let hpa: Hpa | undefined;
    await waitFor(
      async () => {
        hpa = JSON.parse(await kubectl(kube!, ["get", "hpa", `keda-hpa-${NAME}`, "-o", "json"])) as Hpa;
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: `KEDA to create the HPA keda-hpa-${NAME}` },
    );
    assert.deepEqual(hpa!.spec.scaleTargetRef, { apiVersion: "apps/v1", kind: "Deployment", name: NAME });
    assert.deepEqual(hpa!.spec.metrics.map((m) => [m.type, m.external?.metric]), [
      ["External", { name: METRIC, selector: { matchLabels: { "scaledobject.keda.sh/name": NAME } } }],
    ]);

    // What the HPA controller asks for, through the API server's aggregation layer.
    const selector = encodeURIComponent(`scaledobject.keda.sh/name=${NAME}`);
    const path = `/apis/external.metrics.k8s.io/v1beta1/namespaces/default/${METRIC}?labelSelector=${selector}`;
    const expectValue = (expected: string) =>
      waitFor(
        async () => {
          const list = JSON.parse(await kubectl(kube!, ["get", "--raw", path])) as { items: { metricName: string; value: string }[] };
          return JSON.stringify(list.items.map((item) => [item.metricName, item.value])) === JSON.stringify([[METRIC, expected]]);
        },
        { timeoutMs: 90_000, intervalMs: 250, what: `${path} to answer ${METRIC} = ${expected}` },
      );
    await expectValue("7");
    // Read at each request, not a value cached at the start.
    value = 12;
    await expectValue("12");
  });

  test("stop() ends both processes and removes their files, certificates and the APIService", async () => {
    const dirs = () => readdirSync(tmpdir()).filter((name) => /^docservice-keda_(operator|adapter)-/.test(name)).map((name) => join(tmpdir(), name));
    // KEDA's processes name their dirs (--cert-dir).
    const naming = (paths: string[]) =>
      readdirSync("/proc")
        .filter((pid) => /^\d+$/.test(pid))
        .filter((pid) => {
          try {
            const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
            return paths.some((path) => cmdline.includes(path));
          } catch {
            return false; // exited meanwhile
          }
        });
    const pkiDir = dirname(kube!.pki.ca.cert);
    const certs = () => readdirSync(pkiDir).filter((name) => name.startsWith("keda"));
    const running = dirs();
    assert.equal(running.length, 2);
    assert.equal(naming(running).length, 2);
    assert.ok(certs().length > 0);

    await keda!.stop();
    assert.deepEqual(dirs(), []);
    assert.deepEqual(naming(running), []);
    assert.deepEqual(certs(), []);
    assert.equal(await kubectl(kube!, ["get", "apiservice", "v1beta1.external.metrics.k8s.io", "--ignore-not-found", "-o", "name"]), "");
  });
});
