/**
 * The JSON of a signature's audit trail, the caller's metadata as its last
 * member. The metadata's JSON was written once, by the service
 * (request/sign-order-from-message.ts), and is the very text the document
 * information holds: it is spliced in, not parsed here to be written again.
 * The result is what JSON.stringify writes of the audit with the metadata
 * object appended: JSON.stringify's output reads back to the same object and
 * writes again to the same text. `audit` has members (a signature's always does).
 */
export function auditTrailJson(audit: object, metadataJson: string | undefined): string {
  const json = JSON.stringify(audit);
  return metadataJson === undefined ? json : `${json.slice(0, -1)},"metadata":${metadataJson}}`;
}
