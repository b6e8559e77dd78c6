import type { CollectRequest } from "../../../gen/ts-proto/docservice/v1/telemetry.js";
import type { FieldIssue } from "../../core/errors.js";
import { CONTROL_CHARACTERS_ISSUE, NO_CONTROL_CHARACTERS } from "../../core/identifier.js";
import { MAX_DOCUMENT_ID_CHARS, MAX_EVENTS_PER_REPORT, MAX_METADATA_KEYS, MAX_TEXT_CHARS, metadataSizeIssues } from "./collect-request-schema.js";

/**
 * A report as TelemetryService receives it, held to the limits the JSON body
 * of /v1/collect is held to (collect-request-schema.ts): Connect and gRPC
 * callers reach the service without that schema. Every record is written to
 * Kafka or the spool whole, so an unbounded one would be refused there, after
 * the client was told it was stored.
 */
export function collectRequestIssues(request: CollectRequest, limits: { metadataMaxBytes: number }): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const tooLong = (field: string, text: string, max: number) => {
    if (text.length > max) issues.push({ field, issue: `must be at most ${max} characters` });
  };
  tooLong("libraryVersion", request.libraryVersion, MAX_TEXT_CHARS.libraryVersion);
  tooLong("browserInfo.userAgent", request.browserInfo?.userAgent ?? "", MAX_TEXT_CHARS.userAgent);
  tooLong("browserInfo.currentUrl", request.browserInfo?.currentUrl ?? "", MAX_TEXT_CHARS.currentUrl);
  tooLong("browserInfo.hostname", request.browserInfo?.hostname ?? "", MAX_TEXT_CHARS.hostname);

  const keys = Object.keys(request.metadata);
  if (keys.length > MAX_METADATA_KEYS) issues.push({ field: "metadata", issue: `must have at most ${MAX_METADATA_KEYS} keys` });
  else if (keys.some((key) => key.length > MAX_TEXT_CHARS.metadataKey)) issues.push({ field: "metadata", issue: `keys must be at most ${MAX_TEXT_CHARS.metadataKey} characters` });
  else issues.push(...metadataSizeIssues(request.metadata, limits.metadataMaxBytes));

  if (request.events.length < 1 || request.events.length > MAX_EVENTS_PER_REPORT) {
    issues.push({ field: "events", issue: `must have 1 to ${MAX_EVENTS_PER_REPORT} events` });
    return issues;
  }
  request.events.forEach((event, i) => {
    if (!event.timestamp || Number.isNaN(event.timestamp.getTime())) issues.push({ field: `events[${i}].timestamp`, issue: "is required" });
    if (!event.documentId || event.documentId.length > MAX_DOCUMENT_ID_CHARS) {
      issues.push({ field: `events[${i}].documentId`, issue: `must be 1 to ${MAX_DOCUMENT_ID_CHARS} characters` });
    } else if (!NO_CONTROL_CHARACTERS.test(event.documentId)) {
      issues.push({ field: `events[${i}].documentId`, issue: CONTROL_CHARACTERS_ISSUE });
    }
    tooLong(`events[${i}].documentCreatedAt`, event.documentCreatedAt, MAX_TEXT_CHARS.documentCreatedAt);
  });
  return issues;
}
