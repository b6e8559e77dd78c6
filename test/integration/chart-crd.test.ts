// The CRD as users install it: the Helm chart's YAML file, applied with
// kubectl to a real kube-apiserver. Rules and enums are read from that file,
// so one lost on the way from operator/crd.ts fails here.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { parse } from "yaml";
import { COMPONENTS, CRD } from "../../operator/crd.js";
import { CRD_FILE } from "../../operator/crd-yaml.js";
import { VERSION } from "../../services/core/version.js";
import { celRules, openApiSchema, schemaNodes } from "../support/crd-schema.js";
import { kubectl, startKubeApiServer, waitForCrds, type KubeApiServer } from "../support/kube.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const FILE_SCHEMA = openApiSchema(parse(readFileSync(CRD_FILE, "utf8"), { version: "1.1" }));
const FILE_RULES = celRules(FILE_SCHEMA);

/** Per CEL rule, by the path of its schema node: a spec it rejects and the nearest spec it accepts. */
const CASES: Record<string, { invalid: object; valid: object }> = {
  spec: {
    invalid: { autoscaling: { mode: "keda" } },
    valid: { autoscaling: { mode: "keda" }, kafka: { bootstrapServers: ["kafka:9092"] } },
  },
  "spec.signing": {
    invalid: { signing: { level: "B-LT" } },
    valid: { signing: { level: "B-LT", tsaUrl: "http://tsa.example/" } },
  },
  "spec.kafka": {
    invalid: { kafka: { bootstrapServers: ["kafka:9092"], dedupeWindowHours: 168 } },
    valid: { kafka: { bootstrapServers: ["kafka:9092"] } },
  },
  "spec.conversion": {
    invalid: { conversion: { backend: "gotenberg" } },
    valid: { conversion: { backend: "gotenberg", gotenbergUrl: "http://gotenberg:3000" } },
  },
  ...Object.fromEntries(
    COMPONENTS.map((name) => [
      `spec.components.${name}.autoscaling`,
      {
        invalid: { components: { [name]: { autoscaling: { minReplicas: 3, maxReplicas: 2 }, resources: { requests: { cpu: "1" } } } } },
        valid: { components: { [name]: { autoscaling: { minReplicas: 2, maxReplicas: 2 }, resources: { requests: { cpu: "1" } } } } },
      },
    ]),
  ),
  ...Object.fromEntries(
    COMPONENTS.map((name) => [
      `spec.components.${name}`,
      {
        invalid: { components: { [name]: { autoscaling: { minReplicas: 1, maxReplicas: 2 }, resources: { requests: { memory: "1Gi" } } } } },
        valid: { components: { [name]: { autoscaling: { minReplicas: 1, maxReplicas: 2 }, resources: { requests: { cpu: "250m" } } } } },
      },
    ]),
  ),
};

/** { a: { b: value } } from "a.b". */
const nested = (path: string, value: unknown): object =>
  path.split(".").reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as object;

describe("the Helm chart's CRD file on a real API server", () => {
  let kube: KubeApiServer;
  let created = 0;

  before(async () => {
    kube = await startKubeApiServer();
    await kubectl(kube, ["apply", "--server-side", "-f", CRD_FILE]);
    await waitForCrds(kube, [CRD.metadata.name]);
  });
  after(() => kube?.stop());

  /** Server-side dry run of a DocService; resolves the object as the API server would store it. */
  const dryRun = async (spec: object): Promise<any> => {
    const resource = { apiVersion: "docservice.dev/v1alpha1", kind: "DocService", metadata: { name: `ds-${++created}` }, spec: { version: "1", ...spec } };
    return JSON.parse(await kubectl(kube, ["create", "--dry-run=server", "-o", "json", "-f", "-"], { input: JSON.stringify(resource) }));
  };
  const rejection = (spec: object) =>
    dryRun(spec).then(
      () => assert.fail(`accepted: ${JSON.stringify(spec)}`),
      (error: Error) => error.message,
    );

  test("the API server holds the schema of operator/crd.ts, every CEL rule with a case here", async () => {
    const stored = JSON.parse(await kubectl(kube, ["get", "crd", CRD.metadata.name, "-o", "json"]));
    assert.deepStrictEqual(openApiSchema(stored), openApiSchema(CRD));
    assert.equal(FILE_RULES.length, celRules(openApiSchema(CRD)).length);
    assert.deepEqual(FILE_RULES.map((r) => r.path).sort(), Object.keys(CASES).sort());
  });

  for (const rule of FILE_RULES) {
    test(`CEL rule at ${rule.path}: "${rule.message}"`, async () => {
      const { invalid, valid } = CASES[rule.path] ?? assert.fail(`no case for the rule at ${rule.path}`);
      assert.ok((await rejection(invalid)).includes(`${rule.path}: Invalid value: "object": ${rule.message}`));
      await dryRun(valid);
    });
  }

  test("each enum of the spec rejects a value outside it", async () => {
    const enums = schemaNodes(FILE_SCHEMA).filter((n) => n.path.startsWith("spec.") && !n.path.includes("[*]") && "enum" in n.schema);
    assert.deepEqual(enums.map((n) => n.path).sort(), ["spec.autoscaling.mode", "spec.conversion.backend", "spec.signing.level"]);
    for (const { path, schema } of enums) {
      const allowed = schema.enum as string[];
      const error = await rejection(nested(path.slice("spec.".length), "none-of-these"));
      assert.match(error, new RegExp(`${path.replaceAll(".", "\\.")}: Unsupported value: "none-of-these"`));
      // An allowed value may still break a CEL rule on its own (gotenberg without a URL, B-LT without a TSA): only the enum must not object.
      for (const value of allowed) {
        const outcome = await dryRun(nested(path.slice("spec.".length), value)).then(() => "accepted", (e: Error) => e.message);
        assert.doesNotMatch(outcome, /Unsupported value/, `${path}: ${value}`);
      }
    }
  });

  test("the minimal example gets the defaults of operator/crd.ts filled in", async () => {
    await kubectl(kube, ["apply", "-f", `${ROOT}operator/examples/minimal.yaml`]);
    const stored = JSON.parse(await kubectl(kube, ["get", "docservice", "docservice", "-o", "json"]));
    assert.deepStrictEqual(stored.spec, {
      version: VERSION,
      image: "docservice/docservice",
      conversionImage: "docservice/docservice-conversion",
      components: Object.fromEntries(COMPONENTS.map((name) => [name, { replicas: 1 }])),
      conversion: { backend: "local" },
      expectedLoad: { sign: 0, convert: 0, collect: 0, auth: 0 },
      autoscaling: { mode: "auto", headroom: 1.3, scaleDownStabilizationSeconds: 300 },
    });
  });

  test("optional sections get their defaults when present", async () => {
    const { spec } = await dryRun({ kafka: { bootstrapServers: ["kafka:9092"] }, redis: { address: "redis:6379" } });
    assert.deepStrictEqual(spec.kafka, {
      bootstrapServers: ["kafka:9092"],
      topic: "docservice.usage.v1",
      partitions: 6,
      replicationFactor: 3,
      retentionHours: 168,
      deleteTopicsOnDelete: false,
    });
    assert.deepStrictEqual(spec.redis, { address: "redis:6379", tls: false });
  });
});
