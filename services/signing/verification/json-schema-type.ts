/**
 * The TypeScript type of the value a JSON Schema written `as const` describes,
 * for the keywords our answer schemas use (type, enum, items, properties,
 * required). A schema published in the OpenAPI document and the type of the
 * value answered are then one text and cannot drift apart.
 */
export type JsonSchemaValue<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly type: "string" }
    ? string
    : S extends { readonly type: "boolean" }
      ? boolean
      : S extends { readonly type: "integer" | "number" }
        ? number
        : S extends { readonly type: "array"; readonly items: infer I }
          ? JsonSchemaValue<I>[]
          : S extends { readonly type: "object"; readonly properties: infer P }
            ? JsonObject<P, S extends { readonly required: readonly (infer R)[] } ? R : never>
            : unknown;

/** Required properties as such, the others optional; flattened so editors show one object type. */
type JsonObject<P, Required> = Flatten<
  { -readonly [K in keyof P as K extends Required ? K : never]: JsonSchemaValue<P[K]> } & {
    -readonly [K in keyof P as K extends Required ? never : K]?: JsonSchemaValue<P[K]>;
  }
>;

type Flatten<T> = { [K in keyof T]: T[K] } & {};
