import type { Metadata, MetadataDrop } from "../../clients/telemetry/metadata.js";

/**
 * A usage report that has passed every rule of the wire it came in on: the one
 * shape TelemetryService accepts. Each wire is converted to it once, at its
 * edge, where it is checked once: the JSON body of /v1/collect in
 * intake/collect-request-schema.ts, the CollectRequest of gRPC and Connect in
 * intake/collect-request-check.ts. Nothing after an edge checks it again.
 * The limits of both edges are the client library's own (report-limits.ts and
 * metadata.ts in clients/telemetry), so what it sends is never refused.
 */
export interface UsageReport {
  /** Well-formed; the community key when the client sent none. */
  licenseKey: string;
  libraryVersion: string;
  /** The page's hostname, "" outside a browser: the one part of the client's environment that is kept. */
  hostname: string;
  /** Within METADATA_LIMITS ({} when none): dimensions to count by, never part of a document's identity. */
  metadata: Metadata;
  /** What was left out of the sent metadata to keep it within its limits (the caller is told). */
  metadataDropped: readonly MetadataDrop[];
  /** 1 to REPORT_LIMITS.maxEvents. */
  events: UsageReportEvent[];
}

export interface UsageReportEvent {
  documentId: string;
  /** As the client sent it, null when it did not know it. */
  documentCreatedAt: string | null;
  /** When the document was opened (client clock), ISO 8601 UTC with milliseconds: the event counts for this UTC day. */
  openedAt: string;
}
