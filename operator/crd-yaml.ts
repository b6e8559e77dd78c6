/** The chart's copy of the CRD and the YAML written to it from operator/crd.ts. */
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { CRD } from "./crd.js";

export const CRD_FILE = fileURLToPath(new URL("../charts/docservice-operator/crds/docservices.docservice.dev.yaml", import.meta.url));

const HEADER = "# Generated from operator/crd.ts by `npm run generate`; do not edit.\n";

/**
 * A plain serializer, not client-node's dumpYaml: that one maps the object
 * through its typed model and drops keys spelled differently there
 * (`default`, `x-kubernetes-validations`, ...).
 */
export function crdYaml(): string {
  // YAML 1.1 as kubectl and Helm read it, so strings such as "yes" or "0755"
  // come out quoted; no anchors for the sub-schemas crd.ts reuses.
  return HEADER + stringify(CRD, { version: "1.1", lineWidth: 0, aliasDuplicateObjects: false });
}
