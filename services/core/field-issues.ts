import type { z } from "zod";
import type { FieldIssue } from "./errors.js";

export interface FieldIssueOptions {
  /** Where the validated value sits in the request, e.g. "signer". */
  prefix?: string;
  /** Extra words for an unknown field, by the object it was found in: {signer: "put application data in metadata"}. */
  unknownFieldAdvice?: Record<string, string>;
}

/** `{field, issue}` for every problem zod found, one per unknown field, paths written as in the JSON ("events[0].timestamp"). */
export function fieldIssues(error: z.ZodError, options: FieldIssueOptions = {}): FieldIssue[] {
  return error.issues.flatMap((issue): FieldIssue[] => {
    const path = [...(options.prefix ? [options.prefix] : []), ...issue.path];
    if (issue.code === "unrecognized_keys") {
      const advice = options.unknownFieldAdvice?.[fieldPath(path)];
      return issue.keys.map((key) => ({ field: fieldPath([...path, key]), issue: `is not a known field${advice ? `; ${advice}` : ""}` }));
    }
    return [{ field: fieldPath(path) || "body", issue: issue.message }];
  });
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** Longest path written back; keys are the client's, and a deep or long-keyed one would make the answer as large as the request. */
const MAX_PATH_CHARS = 200;

/**
 * ["auditTrail", 0, "data"] → "auditTrail[0].data". A key that is not an
 * identifier is quoted as in JavaScript (["a.b", ""] → '["a.b"][""]'), so every
 * path names exactly one place; one over MAX_PATH_CHARS is cut there and ends in "…".
 * `start` is a path written already, which `path` continues ("auditTrail[3].data", ["a"] → "auditTrail[3].data.a").
 */
export function fieldPath(path: PropertyKey[], start = ""): string {
  const text = path.reduce<string>((text, part) => {
    if (text.length > MAX_PATH_CHARS) return text;
    if (typeof part === "number") return `${text}[${part}]`;
    const key = String(part);
    if (!IDENTIFIER.test(key)) return `${text}[${JSON.stringify(key)}]`;
    return text ? `${text}.${key}` : key;
  }, start);
  return text.length > MAX_PATH_CHARS ? `${text.slice(0, MAX_PATH_CHARS - 1)}…` : text;
}
