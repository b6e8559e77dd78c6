import type { FieldIssue } from "../core/errors.js";

/**
 * A usage report that has passed every rule of the wire it came in on: the one
 * shape TelemetryService accepts. Each wire is converted to it once, at its
 * edge, where it is checked once: the JSON body of /v1/collect in
 * intake/collect-request-schema.ts, the CollectRequest of gRPC and Connect in
 * intake/collect-request-check.ts. Nothing after an edge checks it again.
 */
export interface UsageReport {
  /** Well-formed; the community key when the client sent none. */
  licenseKey: string;
  libraryVersion: string;
  /** The page's hostname, "" outside a browser: the one part of the client's environment that is kept. */
  hostname: string;
  /** Flat, values as strings; part of what makes a document distinct. */
  metadata: Record<string, string>;
  /** 1 to MAX_EVENTS_PER_REPORT. */
  events: UsageReportEvent[];
}

export interface UsageReportEvent {
  documentId: string;
  /** As the client sent it, null when it did not know it. */
  documentCreatedAt: string | null;
  /** When the document was opened (client clock), ISO 8601 UTC with milliseconds: the event counts for this UTC day. */
  openedAt: string;
}

// The limits of a report, whichever wire it comes on. Every record is written
// to Kafka or the spool whole, so an unbounded one would be refused there,
// after the client was told it was stored.
export const MAX_EVENTS_PER_REPORT = 100;
export const MAX_DOCUMENT_ID_CHARS = 128;
export const MAX_METADATA_KEYS = 32;
/** Longest of each other text, in characters. */
export const MAX_TEXT_CHARS = { libraryVersion: 64, userAgent: 1000, currentUrl: 4000, hostname: 255, metadataKey: 64, documentCreatedAt: 64 } as const;

/** Flat metadata over `maxBytes` as JSON, as an issue. */
export function metadataSizeIssues(metadata: Record<string, string>, maxBytes: number): FieldIssue[] {
  return Buffer.byteLength(JSON.stringify(metadata)) > maxBytes ? [{ field: "metadata", issue: `must be at most ${maxBytes} bytes as JSON` }] : [];
}
