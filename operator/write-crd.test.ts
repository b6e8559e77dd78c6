import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { parse, parseDocument, visit } from "yaml";
import { celRules, openApiSchema, schemaCounts } from "../test/support/crd-schema.js";
import { CRD } from "./crd.js";
import { CRD_FILE, crdYaml } from "./crd-yaml.js";

const STALE = "the chart's CRD is out of date with operator/crd.ts: run 'npm run generate'";

describe("the chart's CRD file", () => {
  const text = readFileSync(CRD_FILE, "utf8");
  // As kubectl and Helm read it (YAML 1.1).
  const parsed = parse(text, { version: "1.1" }) as unknown;

  test("parses back to exactly the CRD object of operator/crd.ts", () => {
    assert.deepStrictEqual(parsed, CRD, STALE);
  });

  test("keeps every CEL rule, default and enum of the object", () => {
    const inObject = schemaCounts(openApiSchema(CRD));
    // Zero would make the comparison below vacuous.
    assert.ok(inObject.celRules > 0 && inObject.defaults > 0 && inObject.enums > 0, JSON.stringify(inObject));
    assert.deepEqual(schemaCounts(openApiSchema(parsed)), inObject);
    assert.deepEqual(celRules(openApiSchema(parsed)), celRules(openApiSchema(CRD)));
  });

  test("is what operator/write-crd.ts writes now, as plain YAML", () => {
    assert.equal(text, crdYaml(), STALE);
    let aliases = 0;
    visit(parseDocument(text), { Alias: () => void aliases++ });
    assert.equal(aliases, 0, "no YAML aliases (crd.ts reuses sub-schemas)");
  });
});
