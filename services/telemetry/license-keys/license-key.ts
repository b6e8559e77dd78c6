/**
 * What a license key may look like: 8 to 128 printable ASCII characters
 * without spaces. Checked wherever one arrives (X-License-Key, a usage query,
 * the admin calls), before any store sees it: stores have key limits of their
 * own (LMDB's 1,978 bytes), and their errors are not the client's answer.
 */

/** The key a client without one reports under (SPEC 2.5); always accepted, never registered. */
export const COMMUNITY_LICENSE_KEY = "community-and-eval-agplv3";

const MIN_LICENSE_KEY_CHARS = 8;
const MAX_LICENSE_KEY_CHARS = 128;
const LICENSE_KEY = new RegExp(`^[\\x21-\\x7e]{${MIN_LICENSE_KEY_CHARS},${MAX_LICENSE_KEY_CHARS}}$`);

/** The rule as JSON Schema, for /openapi.json. */
export const licenseKeyJsonSchema = {
  type: "string",
  minLength: MIN_LICENSE_KEY_CHARS,
  maxLength: MAX_LICENSE_KEY_CHARS,
  pattern: LICENSE_KEY.source,
  description: `${MIN_LICENSE_KEY_CHARS} to ${MAX_LICENSE_KEY_CHARS} printable ASCII characters without spaces.`,
} as const;

/** What is wrong with `text` as a license key, undefined when nothing is. */
export function licenseKeyIssue(text: string): string | undefined {
  return LICENSE_KEY.test(text) ? undefined : `must be ${MIN_LICENSE_KEY_CHARS} to ${MAX_LICENSE_KEY_CHARS} printable ASCII characters without spaces`;
}
