/**
 * The JSON answers the docs show under their commands, such as
 * `{"apiKey":"dsk_…","key":{"keyId":"…"}}`: JSON in which `…` stands for
 * what varies from run to run. Inside a string it matches any text ("dsk_…");
 * as a value, any value; as an object member or an array element, members or
 * elements not shown. An object may always have keys that are not shown; an
 * array without `…` has exactly the elements shown.
 */

export type JsonShape =
  | { kind: "any" }
  | { kind: "string"; pattern: RegExp }
  | { kind: "literal"; value: number | boolean | null }
  | { kind: "object"; members: [string, JsonShape][] }
  | { kind: "array"; items: JsonShape[]; more: boolean };

const ELLIPSIS = "…";

/** The position just past the JSON value (or shape) that opens at `start`, or -1 when its brackets do not close. */
export function jsonEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      i = stringEnd(text, i) - 1;
      if (i < 0) return -1;
    } else if (char === "{" || char === "[") depth++;
    else if (char === "}" || char === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** The position just past the string literal that opens at `start`, or 0 when it does not close. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i + 1;
  }
  return 0;
}

/** Reads a shape; throws a SyntaxError naming the position where it is not one. */
export function parseShape(text: string): JsonShape {
  let pos = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at ${pos} of ${text}`);
  };
  const skipSpace = () => {
    while (/\s/.test(text[pos] ?? "")) pos++;
  };
  const expect = (char: string) => {
    skipSpace();
    if (text[pos] !== char) fail(`expected ${char}`);
    pos++;
  };
  const string = (): string => {
    const end = stringEnd(text, pos);
    if (end === 0) fail("unterminated string");
    const value = JSON.parse(text.slice(pos, end)) as string;
    pos = end;
    return value;
  };
  /** Reads items up to `close`: `…` sets `more`, anything else goes through `item`. */
  const sequence = (close: string, item: () => void): boolean => {
    let more = false;
    pos++;
    skipSpace();
    while (text[pos] !== close) {
      if (text[pos] === ELLIPSIS) {
        more = true;
        pos++;
      } else item();
      skipSpace();
      if (text[pos] === ",") pos++;
      else if (text[pos] !== close) fail(`expected , or ${close}`);
      skipSpace();
    }
    pos++;
    return more;
  };
  const value = (): JsonShape => {
    skipSpace();
    const char = text[pos];
    if (char === ELLIPSIS) {
      pos++;
      return { kind: "any" };
    }
    if (char === "{") {
      const members: [string, JsonShape][] = [];
      sequence("}", () => {
        const key = string();
        expect(":");
        members.push([key, value()]);
      });
      return { kind: "object", members };
    }
    if (char === "[") {
      const items: JsonShape[] = [];
      const more = sequence("]", () => items.push(value()));
      return { kind: "array", items, more };
    }
    if (char === '"') {
      const parts = string().split(ELLIPSIS).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
      return { kind: "string", pattern: new RegExp(`^${parts.join(".*")}$`, "s") };
    }
    const literal = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(pos))?.[0];
    if (literal === undefined) return fail("expected a value");
    pos += literal.length;
    return { kind: "literal", value: JSON.parse(literal) as number | boolean | null };
  };
  const shape = value();
  skipSpace();
  if (pos !== text.length) fail("unexpected text after the value");
  return shape;
}

/** Why `value` does not have `shape`, or undefined when it has. */
export function shapeMismatch(shape: JsonShape, value: unknown, path = "$"): string | undefined {
  switch (shape.kind) {
    case "any":
      return undefined;
    case "string":
      return typeof value === "string" && shape.pattern.test(value) ? undefined : `${path} is ${JSON.stringify(value)}, not ${shape.pattern}`;
    case "literal":
      return value === shape.value ? undefined : `${path} is ${JSON.stringify(value)}, not ${JSON.stringify(shape.value)}`;
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return `${path} is not an object`;
      for (const [key, member] of shape.members) {
        if (!(key in value)) return `${path}.${key} is missing`;
        const problem = shapeMismatch(member, (value as Record<string, unknown>)[key], `${path}.${key}`);
        if (problem) return problem;
      }
      return undefined;
    }
    case "array": {
      if (!Array.isArray(value)) return `${path} is not an array`;
      if (!shape.more) {
        if (value.length !== shape.items.length) return `${path} has ${value.length} elements, not ${shape.items.length}`;
        return shape.items.map((item, i) => shapeMismatch(item, value[i], `${path}[${i}]`)).find(Boolean);
      }
      // With `…`, the elements shown appear in this order, others around them.
      let next = 0;
      for (const [i, item] of shape.items.entries()) {
        while (next < value.length && shapeMismatch(item, value[next]) !== undefined) next++;
        if (next === value.length) return `${path} has no element like the ${i + 1}. shown`;
        next++;
      }
      return undefined;
    }
  }
}
