import assert from "node:assert/strict";
import { request } from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { GROUP_VERSION, parseEqualitySelector, startExternalMetricsApi } from "./external-metrics-api.js";
import { createCa, issueLeaf, type KeyPairPem } from "./internal-pki.js";

interface Answer {
  status: number;
  body: any;
}

describe("external metrics API", () => {
  const servingCa = createCa("serving CA");
  const serving = issueLeaf(servingCa, ["localhost"]);
  const frontProxyCa = createCa("front-proxy CA");
  const frontProxy = issueLeaf(frontProxyCa, ["front-proxy-client"]);
  const logged: object[] = [];
  let port = 0;
  let close: () => void = () => {};

  before(async () => {
    const server = await startExternalMetricsApi({
      host: "127.0.0.1",
      port: 0,
      cert: serving.certificate,
      key: serving.privateKey,
      clientCa: frontProxyCa.certificate,
      allowedNames: ["front-proxy-client"],
      metrics: [
        {
          name: "docservice_conversion_demand",
          value: async (namespace, selector) => {
            if (selector.broken) throw new Error("no conversion pod answered");
            return namespace === "prod" ? 2.5 : 3;
          },
        },
      ],
      log: (message, fields) => logged.push({ message, ...fields }),
    });
    port = (server.address() as AddressInfo).port;
    close = () => server.close();
  });
  after(() => close());

  function get(path: string, client?: KeyPairPem): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const call = request(
        { host: "127.0.0.1", port, path, ca: servingCa.certificate, servername: "localhost", cert: client?.certificate, key: client?.privateKey, timeout: 5_000 },
        (response) => {
          let text = "";
          response.on("data", (chunk: Buffer) => (text += chunk.toString()));
          response.on("end", () => resolve({ status: response.statusCode!, body: response.headers["content-type"]?.startsWith("application/json") ? JSON.parse(text) : text }));
        },
      );
      call.on("error", reject);
      call.end();
    });
  }

  const metricPath = (namespace: string, selector: string) =>
    `/apis/${GROUP_VERSION}/namespaces/${namespace}/docservice_conversion_demand?labelSelector=${encodeURIComponent(selector)}`;

  test("the front proxy reads a metric: one value, the selector as its labels, as a quantity", async () => {
    const { status, body } = await get(metricPath("prod", "app.kubernetes.io/instance=acme"), frontProxy);
    assert.equal(status, 200);
    assert.equal(body.kind, "ExternalMetricValueList");
    assert.equal(body.apiVersion, GROUP_VERSION);
    assert.equal(body.items.length, 1);
    assert.deepEqual({ ...body.items[0], timestamp: undefined }, {
      metricName: "docservice_conversion_demand",
      metricLabels: { "app.kubernetes.io/instance": "acme" },
      value: "2500m",
      timestamp: undefined,
    });
    assert.ok(Date.now() - Date.parse(body.items[0].timestamp) < 60_000);
    assert.equal((await get(metricPath("staging", "app.kubernetes.io/instance=acme"), frontProxy)).body.items[0].value, "3");
  });

  test("discovery lists the metric", async () => {
    const { status, body } = await get(`/apis/${GROUP_VERSION}`, frontProxy);
    assert.equal(status, 200);
    assert.deepEqual(body.resources.map((r: any) => [r.name, r.namespaced, r.verbs]), [["docservice_conversion_demand", true, ["get"]]]);
  });

  test("anyone but the front proxy is refused: no certificate, another CA's, another name", async () => {
    const otherCa = createCa("someone's CA");
    for (const client of [undefined, issueLeaf(otherCa, ["front-proxy-client"]), issueLeaf(frontProxyCa, ["intruder"])]) {
      const { status, body } = await get(metricPath("prod", "app.kubernetes.io/instance=acme"), client);
      assert.equal(status, 401);
      assert.equal(body.kind, "Status");
      assert.equal(body.reason, "Unauthorized");
    }
    assert.equal((await get(`/apis/${GROUP_VERSION}`)).status, 401, "nor may it list what is served");
  });

  test("health without a certificate, for the kubelet's probes", async () => {
    assert.deepEqual(await get("/readyz"), { status: 200, body: "ok" });
  });

  test("errors are Kubernetes Status bodies: an unknown metric, a set-based selector, a metric that cannot be read", async () => {
    const unknown = await get(`/apis/${GROUP_VERSION}/namespaces/prod/cpu_of_everything`, frontProxy);
    assert.deepEqual([unknown.status, unknown.body.reason], [404, "NotFound"]);
    const setBased = await get(metricPath("prod", "app.kubernetes.io/instance in (a,b)"), frontProxy);
    assert.deepEqual([setBased.status, setBased.body.reason], [400, "BadRequest"]);
    const broken = await get(metricPath("prod", "broken=yes"), frontProxy);
    assert.deepEqual([broken.status, broken.body.reason], [503, "ServiceUnavailable"]);
    assert.match(broken.body.message, /no conversion pod answered/);
    assert.ok(logged.some((entry: any) => entry.message === "external metric unavailable"));
    const elsewhere = await get("/apis/custom.metrics.k8s.io/v1beta2", frontProxy);
    assert.equal(elsewhere.status, 404);
  });

  test("equality selectors as HPAs send them", () => {
    assert.deepEqual(parseEqualitySelector("app.kubernetes.io/instance=acme,tier==web"), { "app.kubernetes.io/instance": "acme", tier: "web" });
    assert.deepEqual(parseEqualitySelector(""), {});
    assert.equal(parseEqualitySelector("a!=b"), undefined);
    assert.equal(parseEqualitySelector("a in (b)"), undefined);
  });
});
