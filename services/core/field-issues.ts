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
    const at = fieldPath([...(options.prefix ? [options.prefix] : []), ...issue.path]);
    if (issue.code === "unrecognized_keys") {
      const advice = options.unknownFieldAdvice?.[at];
      return issue.keys.map((key) => ({ field: fieldPath([...(at ? [at] : []), key]), issue: `is not a known field${advice ? `; ${advice}` : ""}` }));
    }
    return [{ field: at || "body", issue: issue.message }];
  });
}

/** ["auditTrail", 0, "data"] → "auditTrail[0].data". */
function fieldPath(path: PropertyKey[]): string {
  return path.reduce<string>((text, part) => (typeof part === "number" ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part)), "");
}
