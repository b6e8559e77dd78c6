import { normalizedOpenedAt } from "./usage/usage-range.js";

/**
 * One accepted usage event, as written to Kafka (or the spool) and read by the
 * aggregator. Plain JSON.
 */
export interface UsageRecord {
  /** Unique per accepted event (a UUID given on acceptance): aggregation applies each eventId once. */
  eventId: string;
  licenseKey: string;
  /** The client's document id (at most 128 characters). */
  documentId: string;
  /** ISO 8601, or null when the client did not know it. */
  documentCreatedAt: string | null;
  /** When the document was opened, ISO 8601 UTC with milliseconds (client clock); the event counts for this UTC day. */
  openedAt: string;
  /** When the service accepted it, ISO 8601 UTC. */
  receivedAt: string;
  libraryVersion: string;
  hostname: string;
  /** The report's flat metadata; part of what makes a document distinct. */
  metadata: Record<string, string>;
}

/**
 * A usage record from its JSON; undefined for anything else (a spool line
 * damaged on disk, a message someone else wrote to the topic, a record whose
 * openedAt is not a date), which is skipped rather than retried forever.
 */
export function parseUsageRecord(json: string): UsageRecord | undefined {
  try {
    const record = JSON.parse(json) as UsageRecord;
    const valid = typeof record?.eventId === "string" && typeof record.licenseKey === "string" && normalizedOpenedAt(record.openedAt) !== undefined;
    return valid ? record : undefined;
  } catch {
    return undefined;
  }
}
