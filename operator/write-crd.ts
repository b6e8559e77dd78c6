/**
 * Writes the DocService CRD (operator/crd.ts) as YAML for the Helm chart:
 * `node --import tsx operator/write-crd.ts [file]` (no file: stdout).
 * `npm run generate` writes the chart's copy; operator/write-crd.test.ts fails
 * when that copy is stale or does not parse back to the CRD object.
 */
import { writeFileSync } from "node:fs";
import { crdYaml } from "./crd-yaml.js";

const [file] = process.argv.slice(2);
if (file) writeFileSync(file, crdYaml());
else process.stdout.write(crdYaml());
