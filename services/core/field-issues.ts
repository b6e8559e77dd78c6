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

/**
 * ["auditTrail", 0, "data"] → "auditTrail[0].data". A key that is not an
 * identifier is quoted as in JavaScript (["a.b", ""] → '["a.b"][""]'), so every
 * path names exactly one place.
 */
function fieldPath(path: PropertyKey[]): string {
  return path.reduce<string>((text, part) => {
    if (typeof part === "number") return `${text}[${part}]`;
    const key = String(part);
    if (!IDENTIFIER.test(key)) return `${text}[${JSON.stringify(key)}]`;
    return text ? `${text}.${key}` : key;
  }, "");
}
