// Self-test of the Kubernetes test environment (scripts/testenv/kubernetes.sh,
// test/support/kube.ts): a real kube-apiserver and etcd, kubectl, KEDA's CRDs,
// @kubernetes/client-node, helm and k6.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { cacheBin } from "../support/cache.js";
import {
  KUBE_ADMIN_USER,
  kedaCrdsFile,
  kubectl,
  startKubeApiServer,
  waitForCrds,
  type KubeApiServer,
} from "../support/kube.js";

const run = promisify(execFile);

// A CRD of the shape the operator's will have: schema, CEL rule, default, status subresource.
const WIDGET_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.testenv.docservice.dev" },
  spec: {
    group: "testenv.docservice.dev",
    names: { kind: "Widget", plural: "widgets", singular: "widget", shortNames: ["wdg"] },
    scope: "Namespaced",
    versions: [
      {
        name: "v1alpha1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                required: ["size"],
                "x-kubernetes-validations": [{ rule: "self.size <= self.maxSize", message: "size must not exceed maxSize" }],
                properties: {
                  size: { type: "integer", minimum: 1 },
                  maxSize: { type: "integer", default: 10 },
                },
              },
              status: { type: "object", properties: { ready: { type: "boolean" } } },
            },
          },
        },
      },
    ],
  },
};

const widget = (name: string, size: number) => ({
  apiVersion: "testenv.docservice.dev/v1alpha1",
  kind: "Widget",
  metadata: { name, namespace: "default" },
  spec: { size },
});

describe("kube-apiserver", () => {
  let kube: KubeApiServer;
  let startupMs: number;
  before(async () => {
    const started = Date.now();
    kube = await startKubeApiServer();
    startupMs = Date.now() - started;
  });
  after(async () => {
    await kube?.stop();
  });

  test("kubectl reaches it on loopback as cluster-admin", async (t) => {
    t.diagnostic(`etcd + kube-apiserver started in ${startupMs} ms`);
    assert.match(kube.server, /^https:\/\/127\.0\.0\.1:\d+$/);
    const version = JSON.parse(await kubectl(kube, ["version", "-o", "json"]));
    assert.equal(version.serverVersion.gitVersion, version.clientVersion.gitVersion);
    assert.equal((await kubectl(kube, ["auth", "can-i", "*", "*", "--all-namespaces"])).trim(), "yes");
    const whoami = JSON.parse(await kubectl(kube, ["auth", "whoami", "-o", "json"]));
    assert.equal(whoami.status.userInfo.username, KUBE_ADMIN_USER);
    // RBAC is enforced: a ServiceAccount without bindings may do nothing (impersonated by the admin).
    await assert.rejects(kubectl(kube, ["get", "pods", "--as", "system:serviceaccount:default:nobody"]), /forbidden/i);
  });

  test("@kubernetes/client-node lists namespaces with the kubeconfig", async () => {
    const config = new KubeConfig();
    config.loadFromFile(kube.kubeconfigPath);
    assert.equal(config.getCurrentCluster()?.server, kube.server);
    const namespaces = await config.makeApiClient(CoreV1Api).listNamespace();
    const names = namespaces.items.map((namespace) => namespace.metadata?.name);
    for (const name of ["default", "kube-system", "kube-public"]) assert.ok(names.includes(name), `${name} in ${names}`);
  });

  test("kubectl apply of a CRD and a custom resource; kubectl get returns it; CEL rules reject", async () => {
    await kubectl(kube, ["apply", "-f", "-"], { input: JSON.stringify(WIDGET_CRD) });
    await waitForCrds(kube, [WIDGET_CRD.metadata.name]);

    await kubectl(kube, ["apply", "-f", "-"], { input: JSON.stringify(widget("small", 3)) });
    const got = JSON.parse(await kubectl(kube, ["get", "wdg", "small", "-o", "json"]));
    assert.deepEqual(got.spec, { size: 3, maxSize: 10 }); // maxSize from the schema's default

    await assert.rejects(
      kubectl(kube, ["apply", "-f", "-"], { input: JSON.stringify(widget("too-big", 11)) }),
      /size must not exceed maxSize/,
    );
  });

  test("KEDA's CRDs apply, and a ScaledObject with a Kafka trigger is accepted", async () => {
    // Server-side: the CRDs are too big for client-side apply's last-applied annotation.
    await kubectl(kube, ["apply", "--server-side", "-f", kedaCrdsFile()]);
    await waitForCrds(kube, ["scaledobjects.keda.sh", "triggerauthentications.keda.sh"]);
    const scaledObject = {
      apiVersion: "keda.sh/v1alpha1",
      kind: "ScaledObject",
      metadata: { name: "aggregator", namespace: "default" },
      spec: {
        scaleTargetRef: { name: "aggregator" },
        minReplicaCount: 1,
        maxReplicaCount: 4,
        triggers: [
          { type: "kafka", metadata: { bootstrapServers: "kafka:9092", consumerGroup: "aggregator", topic: "usage", lagThreshold: "100" } },
        ],
      },
    };
    await kubectl(kube, ["apply", "-f", "-"], { input: JSON.stringify(scaledObject) });
    const got = JSON.parse(await kubectl(kube, ["get", "scaledobjects.keda.sh", "aggregator", "-o", "json"]));
    assert.equal(got.spec.triggers[0].metadata.lagThreshold, "100");
  });
});

describe("helm and k6", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "docservice-testenv-k6-"));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test("helm version runs", async () => {
    const { stdout } = await run(cacheBin("helm"), ["version", "--short"]);
    assert.match(stdout, /^v3\.\d+\.\d+/);
  });

  test("k6 version runs", async () => {
    const { stdout } = await run(cacheBin("k6"), ["version"]);
    // "k6 v1.8.1 (go1.26.8, linux/amd64)", with the executable's own name first.
    assert.match(stdout, /^\S+ v1\.\d+\.\d+ /);
  });

  test("k6 runs a script against a loopback server; thresholds pass, and a breach exits 99", async (t) => {
    let requests = 0;
    const server: Server = createServer((_req, res) => {
      requests++;
      res.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const script = join(dir, "smoke.js");
    writeFileSync(
      script,
      `import http from "k6/http";
import { check } from "k6";
export const options = {
  vus: 2,
  duration: "2s",
  thresholds: {
    http_req_failed: ["rate<0.01"],
    http_req_duration: [__ENV.P95 || "p(95)<500"],
    checks: ["rate==1.0"],
  },
};
export default function () {
  check(http.get(__ENV.TARGET), { "status is 200": (r) => r.status === 200 });
}
`,
    );
    // No usage report and no extension download: there is no network but loopback.
    const env = { ...process.env, TARGET: target, K6_NO_USAGE_REPORT: "true", K6_AUTO_EXTENSION_RESOLUTION: "false" };
    const k6 = cacheBin("k6");
    try {
      const passed = await run(k6, ["run", "--quiet", script], { env });
      t.diagnostic(`k6 sent ${requests} requests in 2 s`);
      assert.ok(requests > 10, `only ${requests} requests`);
      assert.match(passed.stdout, /http_req_duration/);

      // Nothing answers in 0 ms: the threshold is breached, and k6 exits 99 (what fails CI).
      await assert.rejects(run(k6, ["run", "--quiet", "--duration", "1s", script], { env: { ...env, P95: "p(95)<0" } }), {
        code: 99,
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
