/**
 * `fn()`, or `fallback` when it throws: a document under check may hold
 * anything, and an unreadable part (a certificate, a DSS stream, a string) is
 * treated as absent rather than failing the whole verification.
 */
export function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}
