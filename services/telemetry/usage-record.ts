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
    return validRecord(JSON.parse(json));
  } catch {
    return undefined;
  }
}

/** What the records of one report share: written once per Kafka message. */
type SharedFields = Pick<UsageRecord, "licenseKey" | "receivedAt" | "libraryVersion" | "hostname" | "metadata">;
/** What is each event's own. */
type EventFields = Pick<UsageRecord, "eventId" | "documentId" | "documentCreatedAt" | "openedAt">;

/** A Kafka message's value: records that share their report's fields. */
interface UsageMessage {
  shared: SharedFields;
  events: EventFields[];
}

/**
 * The usage records of one Kafka message: a UsageMessage (what
 * serializeUsageRecords writes) or one record (what the topic held before);
 * anything that is not a usage record is skipped.
 */
export function parseUsageRecords(json: string): UsageRecord[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return [];
  }
  const message = value as UsageMessage;
  if (typeof message?.shared !== "object" || message.shared === null || !Array.isArray(message.events)) {
    const record = validRecord(value);
    return record ? [record] : [];
  }
  const records: UsageRecord[] = [];
  for (const event of message.events) {
    const record = validRecord({ ...message.shared, ...event });
    if (record) records.push(record);
  }
  return records;
}

/**
 * Characters of JSON per Kafka message, at most 3 bytes each: well under the
 * producer's request size and the broker's `message.max.bytes` (1 MiB).
 */
const MAX_MESSAGE_CHARS = 64 * 1024;
/** The characters of a message around its shared fields and events. */
const MESSAGE_FRAME_CHARS = '{"shared":,"events":[]}'.length;

/**
 * Records as Kafka messages (UsageMessage JSON), keyed by license key:
 * consecutive records of one report (the same shared fields, the same
 * metadata object) travel as one message, their shared fields written once,
 * up to MAX_MESSAGE_CHARS. Every message costs the producer, the broker and
 * each consumer about the same whatever its size, so a report of ten events
 * costs one message, not ten.
 */
export function serializeUsageRecords(records: UsageRecord[], keys: string[] = [], values: string[] = []): { keys: string[]; values: string[] } {
  let events: string[] = [];
  let chars = 0;
  let shared: UsageRecord | undefined;
  let sharedJson = "";
  const flush = () => {
    if (!shared) return;
    keys.push(shared.licenseKey);
    values.push(`{"shared":${sharedJson},"events":[${events.join(",")}]}`);
    events = [];
  };
  for (const record of records) {
    const json = JSON.stringify({ eventId: record.eventId, documentId: record.documentId, documentCreatedAt: record.documentCreatedAt, openedAt: record.openedAt } satisfies EventFields);
    if (!shared || !sharesFields(shared, record) || chars + json.length > MAX_MESSAGE_CHARS) {
      flush();
      shared = record;
      const { licenseKey, receivedAt, libraryVersion, hostname, metadata } = record;
      sharedJson = JSON.stringify({ licenseKey, receivedAt, libraryVersion, hostname, metadata } satisfies SharedFields);
      chars = MESSAGE_FRAME_CHARS + sharedJson.length;
    }
    events.push(json);
    chars += json.length + 1;
  }
  flush();
  return { keys, values };
}

function sharesFields(a: UsageRecord, b: UsageRecord): boolean {
  return a.licenseKey === b.licenseKey && a.receivedAt === b.receivedAt && a.libraryVersion === b.libraryVersion && a.hostname === b.hostname && a.metadata === b.metadata;
}

function validRecord(value: unknown): UsageRecord | undefined {
  const record = value as UsageRecord;
  const valid = typeof record?.eventId === "string" && typeof record.licenseKey === "string" && normalizedOpenedAt(record.openedAt) !== undefined;
  return valid ? record : undefined;
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
