import type { Metadata } from "../../clients/telemetry/metadata.js";

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
  /**
   * The report's metadata (any JSON object within its limits): dimensions to
   * count by, never part of the document's identity. Records written before
   * metadata could nest carry flat string values, which read the same way.
   */
  metadata: Metadata;
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

/** openedAt as the telemetry service writes it (Date#toISOString, UTC, milliseconds): already what entries compare. */
const CANONICAL_TIME = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** A record's openedAt in UTC with milliseconds (comparable as text), undefined when it is not a date between years 0 and 9999. */
export function normalizedOpenedAt(openedAt: unknown): string | undefined {
  if (typeof openedAt !== "string") return undefined;
  if (CANONICAL_TIME.test(openedAt)) return openedAt;
  const time = Date.parse(openedAt);
  const normalized = Number.isNaN(time) ? "" : new Date(time).toISOString();
  return /^\d{4}-/.test(normalized) ? normalized : undefined;
}
