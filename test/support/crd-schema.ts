/** Walks a CRD's OpenAPI v3 schema (operator/crd.ts, or the chart's YAML parsed). */

export interface SchemaNode {
  /** Field path as the API server writes it in errors, e.g. "spec.components.gateway.autoscaling"; "" for the root. */
  path: string;
  schema: Record<string, unknown>;
}

export interface CelRule {
  path: string;
  rule: string;
  message: string;
}

type Schema = Record<string, unknown>;

/** Every schema node: properties, additionalProperties and items (as `[*]`), anyOf alternatives. */
export function schemaNodes(schema: Schema, path = ""): SchemaNode[] {
  const child = (name: string) => (path ? `${path}.${name}` : name);
  const nodes: SchemaNode[] = [{ path, schema }];
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  for (const [name, sub] of Object.entries(properties)) nodes.push(...schemaNodes(sub, child(name)));
  for (const key of ["additionalProperties", "items"]) {
    const sub = schema[key];
    if (sub && typeof sub === "object") nodes.push(...schemaNodes(sub as Schema, `${path}[*]`));
  }
  for (const sub of (schema.anyOf ?? []) as Schema[]) nodes.push(...schemaNodes(sub, path));
  return nodes;
}

export function celRules(schema: Schema): CelRule[] {
  return schemaNodes(schema).flatMap(({ path, schema: node }) =>
    ((node["x-kubernetes-validations"] ?? []) as { rule: string; message: string }[]).map(({ rule, message }) => ({ path, rule, message })),
  );
}

/** How many CEL rules, defaults and enums the schema declares. */
export function schemaCounts(schema: Schema): { celRules: number; defaults: number; enums: number } {
  const nodes = schemaNodes(schema);
  return {
    celRules: celRules(schema).length,
    defaults: nodes.filter((n) => "default" in n.schema).length,
    enums: nodes.filter((n) => "enum" in n.schema).length,
  };
}

/** The one version's openAPIV3Schema of a CRD. */
export function openApiSchema(crd: unknown): Schema {
  const versions = (crd as { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } }).spec.versions;
  if (versions.length !== 1) throw new Error(`expected one version, got ${versions.length}`);
  return versions[0].schema.openAPIV3Schema;
}
