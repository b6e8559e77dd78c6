/**
 * Writes the DocService CRD (operator/crd.ts) as YAML for the Helm chart:
 * `node --import tsx operator/write-crd.ts [file]` (no file: stdout).
 * `npm run generate` writes the chart's copy; `npm test` fails when it is stale.
 */
import { writeFileSync } from "node:fs";
import { dumpYaml } from "@kubernetes/client-node";
import { CRD } from "./crd.js";

const HEADER = "# Generated from operator/crd.ts by `npm run generate`; do not edit.\n";
const yaml = HEADER + dumpYaml(CRD, { lineWidth: -1, noRefs: true });
const [file] = process.argv.slice(2);
if (file) writeFileSync(file, yaml);
else process.stdout.write(yaml);
