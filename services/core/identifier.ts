/**
 * Identifiers a client makes up (a sign request's `eventId`, a usage event's
 * `documentId`) may be any text but control characters (Unicode category Cc):
 * they end up in store keys, records, logs and the signed PDF, where a control
 * character is never meant and only breaks or forges a line. Spelled as
 * ranges, not \p{Cc}: /openapi.json carries it as a pattern, and clients'
 * regex engines (Schemathesis' among them) do not all know \p{…} classes.
 * Each identifier's length is its own rule.
 */
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f]*$/;

export const CONTROL_CHARACTERS_ISSUE = "must not contain control characters";
