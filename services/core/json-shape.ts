import type { FieldIssue } from "./errors.js";
import { fieldPath } from "./field-issues.js";

/**
 * Deepest nesting of objects and arrays accepted in free-form JSON (a sign
 * request's metadata, an audit event's data): `{}` is 1 level, `{"a": []}` 2.
 * JSON.stringify, safe-stable-stringify, protobuf Struct conversion and
 * structured clone all recurse, and overflow the stack somewhere past a few
 * thousand levels, which 10 KB of `[[[[…` reaches. 32 is also the deepest an
 * audit event's data can nest and still cross gRPC: ts-proto's decoder stops
 * at 100 nested messages, and each level of an object costs three.
 */
export const MAX_JSON_DEPTH = 32;

export interface JsonShapeLimits {
  /** Default {@link MAX_JSON_DEPTH}. */
  maxDepth?: number;
  /** Most members (object properties and array items) at every level together; unlimited when unset. */
  maxMembers?: number;
}

/** Where a value breaks the limits. */
export interface JsonShapeViolation {
  /** The offending place from the checked value, e.g. ["a", 0, "b"]; [] for the value itself (too many members). */
  path: (string | number)[];
  issue: string;
}

interface Container {
  value: object;
  /** 1 for the checked value itself. */
  depth: number;
  parent?: Container;
  key?: string | number;
}

/**
 * The first place (depth first, in member order) where `value`, a parsed JSON
 * value, nests deeper than `maxDepth` or holds more than `maxMembers`; undefined
 * when it keeps both. Iterative, with an explicit stack: it must not overflow
 * on the very values it exists to refuse.
 */
export function jsonShapeViolation(value: unknown, limits: JsonShapeLimits = {}): JsonShapeViolation | undefined {
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  const maxMembers = limits.maxMembers ?? Infinity;
  if (!isContainer(value)) return undefined;
  const stack: Container[] = [{ value, depth: 1 }];
  let members = 0;
  while (stack.length > 0) {
    const container = stack.pop()!;
    if (container.depth > maxDepth) return { path: pathOf(container), issue: `is nested deeper than ${maxDepth} levels` };
    const keys: (string | number)[] = Array.isArray(container.value) ? container.value.map((_, index) => index) : Object.keys(container.value);
    members += keys.length;
    if (members > maxMembers) return { path: [], issue: `has more than ${maxMembers} members (at every level together)` };
    // Pushed last to first, so the first member is looked at first.
    for (let i = keys.length - 1; i >= 0; i--) {
      const member: unknown = (container.value as Record<string | number, unknown>)[keys[i]];
      if (isContainer(member)) stack.push({ value: member, depth: container.depth + 1, parent: container, key: keys[i] });
    }
  }
  return undefined;
}

/**
 * {@link jsonShapeViolation} as a FieldIssue of the value at `field` (a path
 * as written in the JSON, "" for a whole body): `{field: "metadata.a.b[0]",
 * issue: "is nested deeper than 32 levels"}`.
 */
export function jsonShapeIssue(value: unknown, field: string, limits?: JsonShapeLimits): FieldIssue | undefined {
  const violation = jsonShapeViolation(value, limits);
  return violation && { field: fieldPath(violation.path, field) || "body", issue: violation.issue };
}

function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

function pathOf(container: Container): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Container | undefined = container; at?.parent; at = at.parent) path.push(at.key!);
  return path.reverse();
}
