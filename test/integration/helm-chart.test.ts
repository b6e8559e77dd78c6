// The operator's Helm chart: helm lint and helm template, then the rendered
// chart applied to a real kube-apiserver, its RBAC checked by impersonating
// the operator's ServiceAccount.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { parse } from "yaml";
import { cacheBin } from "../support/cache.js";
import { kedaCrdsFile, kubectl, prometheusOperatorCrdsFile, startKubeApiServer, type KubeApiServer } from "../support/kube.js";

const run = promisify(execFile);
const CHART = new URL("../../charts/docservice-operator", import.meta.url).pathname;
const helm = async (args: string[]) => (await run(cacheBin("helm"), args)).stdout;
const template = (...sets: string[]) => helm(["template", "ops", CHART, "--namespace", "docservice-system", "--kube-version", "1.34.0", ...sets.flatMap((s) => ["--set", s])]);

describe("Helm chart", () => {
  let kube: KubeApiServer;
  before(async () => {
    kube = await startKubeApiServer();
  });
  after(() => kube?.stop());

  test("helm lint passes", async () => {
    assert.match(await helm(["lint", CHART, "--kube-version", "1.34.0"]), /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  test("the packaged chart carries the AGPL-3.0-only license text and says so in Chart.yaml", async () => {
    const out = mkdtempSync(join(tmpdir(), "docservice-chart-"));
    try {
      await helm(["package", CHART, "--destination", out]);
      const [archive] = readdirSync(out);
      const chart = parse((await run("tar", ["-xzOf", join(out, archive), "docservice-operator/Chart.yaml"])).stdout) as { version: string; annotations: Record<string, string> };
      assert.equal(archive, `docservice-operator-${chart.version}.tgz`);
      assert.equal(chart.annotations["artifacthub.io/license"], "AGPL-3.0-only");
      const license = (await run("tar", ["-xzOf", join(out, archive), "docservice-operator/LICENSE"], { maxBuffer: 1 << 20 })).stdout;
      assert.equal(license, readFileSync(new URL("../../LICENSE", import.meta.url), "utf8"));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test("the external metrics API is optional: without it, no APIService, Service, certificate or port", async () => {
    const without = await template("externalMetrics.enabled=false");
    for (const absent of [/kind: APIService/, /ops-external-metrics/, /EXTERNAL_METRICS_PORT/, /containerPort: 6443/]) assert.doesNotMatch(without, absent);
    assert.match(await template(), /kind: APIService/);
  });

  test("renders cluster-wide RBAC by default and one Role per watched namespace otherwise", async () => {
    const all = await template();
    assert.match(all, /kind: ClusterRole\n  name: ops\n/);
    assert.match(all, /name: WATCH_NAMESPACES\n\s+value: ""/);
    const scoped = await template("watchNamespaces={apps,staging}");
    assert.doesNotMatch(scoped, /kind: ClusterRole\n  name: ops\n/);
    assert.equal(scoped.match(/kind: Role\n  name: ops\n/g)?.length, 2);
    assert.match(scoped, /value: "apps,staging"/);
  });

  test("installed on an API server, the operator's ServiceAccount may do what it needs and nothing more", async () => {
    await kubectl(kube, ["create", "namespace", "docservice-system"]);
    await kubectl(kube, ["create", "namespace", "apps"]);
    await kubectl(kube, ["apply", "--server-side", "-f", `${CHART}/crds/`]);
    await kubectl(kube, ["apply", "--server-side", "-f", kedaCrdsFile()]);
    await kubectl(kube, ["apply", "--server-side", "-f", prometheusOperatorCrdsFile()]);
    await kubectl(kube, ["apply", "-f", "-"], { input: await template("watchNamespaces={apps}") });
    const can = async (verb: string, resource: string, namespace: string) => {
      // "no" is exit code 1 with "no" on stdout; any other failure is an error
      const answer = await kubectl(kube, ["auth", "can-i", verb, resource, "-n", namespace, "--as", "system:serviceaccount:docservice-system:ops"]).catch(
        (error: Error) => ((error.cause as { stdout?: string } | undefined)?.stdout?.trim() === "no" ? "no" : Promise.reject(error)),
      );
      return answer.trim() === "yes";
    };
    for (const [verb, resource] of [
      ["patch", "deployments.apps"],
      ["create", "services"],
      ["watch", "docservices.docservice.dev"],
      ["update", "docservices.docservice.dev/status"],
      ["patch", "horizontalpodautoscalers.autoscaling"],
      ["create", "scaledobjects.keda.sh"],
      ["patch", "podmonitors.monitoring.coreos.com"],
      ["get", "secrets"],
      ["create", "secrets"],
      ["create", "events"],
      ["list", "pods"],
    ]) {
      assert.ok(await can(verb, resource, "apps"), `${verb} ${resource} in apps`);
    }
    for (const [verb, resource, namespace] of [
      ["list", "secrets", "apps"],
      ["delete", "deployments.apps", "apps"],
      ["patch", "deployments.apps", "default"],
      ["get", "secrets", "default"],
      ["delete", "podmonitors.monitoring.coreos.com", "apps"],
      ["list", "pods", "default"],
      ["get", "configmaps/kube-proxy", "kube-system"],
      ["get", "apiservices.apiregistration.k8s.io/v1beta1.metrics.k8s.io", "default"],
    ]) {
      assert.ok(!(await can(verb, resource, namespace)), `must not ${verb} ${resource} in ${namespace}`);
    }
    assert.ok(await can("update", "leases.coordination.k8s.io", "docservice-system"));
    // the external metrics API: the API server's front-proxy CA, and whether the cluster's APIService is this operator's
    assert.ok(await can("get", "configmaps/extension-apiserver-authentication", "kube-system"));
    assert.ok(await can("get", "apiservices.apiregistration.k8s.io/v1beta1.external.metrics.k8s.io", "default"));
    const apiService = JSON.parse(await kubectl(kube, ["get", "apiservice", "v1beta1.external.metrics.k8s.io", "-o", "json"]));
    assert.deepEqual(apiService.spec.service, { namespace: "docservice-system", name: "ops-external-metrics", port: 443 });
    const servingSecret = JSON.parse(await kubectl(kube, ["get", "secret", "ops-external-metrics-tls", "-n", "docservice-system", "-o", "json"]));
    assert.equal(apiService.spec.caBundle, servingSecret.data["ca.crt"], "the APIService trusts the CA of the serving certificate");
    const served = new X509Certificate(Buffer.from(servingSecret.data["tls.crt"], "base64"));
    assert.ok(served.checkIssued(new X509Certificate(Buffer.from(servingSecret.data["ca.crt"], "base64"))));
    assert.ok(served.checkHost("ops-external-metrics.docservice-system.svc"), "named as the API server calls it");
    assert.match(await kubectl(kube, ["get", "crd", "docservices.docservice.dev", "-o", "jsonpath={.spec.names.shortNames}"]), /ds/);
  });
});
