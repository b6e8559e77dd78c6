// The metadata of usage records as dimensions to count by: each top-level key
// of a report's metadata, with its value, names a group whose distinct
// documents and opens are counted exactly (`groupBy=metadata.<key>` of
// /v1/usage). A document is still one document whatever its dimensions.
import { hash } from "node:crypto";
import type { JsonValue, Metadata } from "../../../clients/telemetry/metadata.js";

/**
 * Distinct keys counted per license key and month. A report has at most
 * METADATA_LIMITS.maxKeys; a key first seen when a month already has this many
 * is not counted that month (what one license key can make the store hold is bounded).
 */
export const MAX_DIMENSION_KEYS = 64;
/** Distinct values of one key counted per license key and month; the values after them count together, as "other values". */
export const MAX_DIMENSION_VALUES = 1000;
/** Characters of a value that make its group; a longer value counts with those that share its first ones. */
export const MAX_DIMENSION_VALUE_CHARS = 256;
/** The id under which values beyond MAX_DIMENSION_VALUES count; ids of values are 16 characters of base64url, so it meets none. */
export const OTHER_VALUES_ID = "other";

export interface Dimension {
  keyId: string;
  key: string;
  valueId: string;
  /** The value as text: a string as it is, anything else as JSON (5, true, null, {"plan":"pro"}). */
  value: string;
}

/** Ids already computed, by text: the same tenants and plans come back in report after report. Emptied when full. */
const ids = new Map<string, string>();
const MAX_CACHED_IDS = 50_000;

/** A bounded id for a key or a value, to name stored sets with: SHA-256, 12 bytes, base64url (16 characters). */
export function dimensionId(text: string): string {
  let id = ids.get(text);
  if (id === undefined) {
    id = hash("sha256", text, "buffer").subarray(0, 12).toString("base64url");
    if (ids.size >= MAX_CACHED_IDS) ids.clear();
    ids.set(text, id);
  }
  return id;
}

export function dimensionValue(value: JsonValue | undefined): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value ?? null) ?? "null");
  if (text.length <= MAX_DIMENSION_VALUE_CHARS) return text;
  // never half a surrogate pair
  return text.slice(0, /[\uD800-\uDBFF]/.test(text[MAX_DIMENSION_VALUE_CHARS - 1]!) ? MAX_DIMENSION_VALUE_CHARS - 1 : MAX_DIMENSION_VALUE_CHARS);
}

/** The dimensions of a record's metadata (records from before metadata could nest carry strings, which read the same). */
export function dimensionsOf(metadata: Metadata | undefined): Dimension[] {
  if (!metadata || typeof metadata !== "object") return [];
  const dimensions: Dimension[] = [];
  for (const [key, raw] of Object.entries(metadata)) {
    if (dimensions.length >= MAX_DIMENSION_KEYS) break;
    const value = dimensionValue(raw);
    dimensions.push({ keyId: dimensionId(key), key, valueId: dimensionId(value), value });
  }
  return dimensions;
}

/** One text for a set of dimensions, so records that share them are counted together. */
export function dimensionsSignature(dimensions: readonly Dimension[]): string {
  return dimensions.map((d) => `${d.keyId}=${d.valueId}`).join(",");
}
