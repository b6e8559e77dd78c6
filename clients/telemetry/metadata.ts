/**
 * The metadata of a usage report: the one definition that this library and the
 * platform's /v1/collect both apply (the platform imports this file).
 *
 * SPEC 4.5 makes `telemetry.metadata` a map of string to any JSON value, sent
 * with every report; the reference editor sends it as configured, nested
 * objects and nulls included, and never reads the answer. So what exceeds the
 * limits is left out, path by path, and the report is kept: a report refused
 * for its metadata would lose the document opens it carries without a trace.
 */

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type Metadata = { readonly [key: string]: JsonValue };

export const METADATA_LIMITS = {
  /** The kept metadata as JSON, in UTF-8 bytes. */
  maxBytes: 2048,
  /** Levels of objects and arrays, the metadata object itself being the first: {"a":{"b":1}} has 2. */
  maxDepth: 4,
  /** Keys of all its objects together, array elements included. */
  maxKeys: 64,
  /** Characters of one key. */
  maxKeyChars: 64,
} as const;

/** Why a part of the metadata was left out. */
export type DropReason = "not an object" | "not JSON" | "too deep" | "key too long" | "too many keys" | "too large";

export interface MetadataDrop {
  /** Where, as `metadata.ctx.plan` or `metadata.tags[3]`. */
  readonly path: string;
  readonly reason: DropReason;
}

export interface BoundedMetadata {
  /** What is kept; undefined when there was no metadata object, or nothing of it was kept. */
  readonly metadata: Metadata | undefined;
  readonly dropped: readonly MetadataDrop[];
}

/** How many drops are listed at most (a hostile report could otherwise make the answer as large as itself). */
export const MAX_LISTED_DROPS = 16;

/**
 * `value` within METADATA_LIMITS. Each top-level entry is kept whole or left
 * out whole when it would pass the number of keys or the bytes (later, smaller
 * entries may still fit); inside an entry, values deeper than the limit and
 * keys longer than it are left out alone. `value` is parsed JSON (what a
 * server reads, or what the client gets from JSON.parse(JSON.stringify(…))).
 */
export function boundMetadata(value: unknown): BoundedMetadata {
  const dropped: MetadataDrop[] = [];
  const drop = (path: string, reason: DropReason) => {
    if (dropped.length < MAX_LISTED_DROPS) dropped.push({ path, reason });
  };
  if (value === undefined || value === null) return { metadata: undefined, dropped };
  if (!isObject(value)) {
    drop("metadata", "not an object");
    return { metadata: undefined, dropped };
  }
  const kept: Record<string, JsonValue> = {};
  let keys = 0;
  let bytes = 2; // {}
  for (const [key, entry] of Object.entries(value)) {
    const path = `metadata${pathKey(key)}`;
    if (key.length > METADATA_LIMITS.maxKeyChars) {
      drop(path, "key too long");
      continue;
    }
    if (keys >= METADATA_LIMITS.maxKeys) {
      drop(path, "too many keys");
      continue;
    }
    const counted = { keys: 1 };
    const clean = cleanValue(entry, path, 2, counted, drop);
    if (clean === undefined) continue;
    if (keys + counted.keys > METADATA_LIMITS.maxKeys) {
      drop(path, "too many keys");
      continue;
    }
    const entryBytes = utf8Length(JSON.stringify(key)) + 1 + utf8Length(JSON.stringify(clean)) + (keys === 0 ? 0 : 1);
    if (bytes + entryBytes > METADATA_LIMITS.maxBytes) {
      drop(path, "too large");
      continue;
    }
    setOwn(kept, key, clean);
    keys += counted.keys;
    bytes += entryBytes;
  }
  return { metadata: keys === 0 ? undefined : kept, dropped };
}

/** `value` as kept at `depth` (of the object or array it would open), counting its keys; undefined when it is left out. */
function cleanValue(value: unknown, path: string, depth: number, counted: { keys: number }, drop: (path: string, reason: DropReason) => void): JsonValue | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
    drop(path, "not JSON");
    return undefined;
  }
  if (typeof value !== "object") {
    drop(path, "not JSON");
    return undefined;
  }
  if (depth > METADATA_LIMITS.maxDepth) {
    drop(path, "too deep");
    return undefined;
  }
  if (Array.isArray(value)) {
    const items: JsonValue[] = [];
    value.forEach((item, index) => {
      const clean = cleanValue(item, `${path}[${index}]`, depth + 1, counted, drop);
      if (clean === undefined) return;
      counted.keys++;
      items.push(clean);
    });
    return items;
  }
  const object: Record<string, JsonValue> = {};
  for (const [key, item] of Object.entries(value)) {
    const itemPath = `${path}${pathKey(key)}`;
    if (key.length > METADATA_LIMITS.maxKeyChars) {
      drop(itemPath, "key too long");
      continue;
    }
    const clean = cleanValue(item, itemPath, depth + 1, counted, drop);
    if (clean === undefined) continue;
    counted.keys++;
    setOwn(object, key, clean);
  }
  return object;
}

/** `object[key] = value` as an own property even for "__proto__" (which JSON.parse makes an own key, and plain assignment would turn into the prototype). */
function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `.key`, or `["key"]` when the key is not a plain name (so a path cannot be misread). */
function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function utf8Length(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) length += code >= 0x800 && !(code >= 0xd800 && code <= 0xdfff) ? 2 : 1;
  }
  return length;
}

/**
 * A JavaScript value as the JSON a report would carry, entry by entry, before
 * {@link boundMetadata}: what JSON.stringify would send (toJSON applied,
 * undefined and functions left out), and an entry that cannot be sent (a
 * cycle, a BigInt) left out alone instead of the whole report failing.
 */
export function asJson(value: unknown): { json: unknown; dropped: readonly MetadataDrop[] } {
  if (!isObject(value) || typeof (value as { toJSON?: unknown }).toJSON === "function") return { json: jsonOf(value), dropped: [] };
  const dropped: MetadataDrop[] = [];
  const json: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    const text = safeStringify(entry);
    if (text === undefined) {
      if (dropped.length < MAX_LISTED_DROPS) dropped.push({ path: `metadata${pathKey(key)}`, reason: "not JSON" });
      continue;
    }
    setOwn(json, key, JSON.parse(text));
  }
  return { json, dropped };
}

function jsonOf(value: unknown): unknown {
  const text = safeStringify(value);
  return text === undefined ? value : JSON.parse(text);
}

function safeStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
