import type { CollectRequest } from "../../../gen/ts-proto/docservice/v1/telemetry.js";
import { validationError, type FieldIssue } from "../../core/errors.js";
import { CONTROL_CHARACTERS_ISSUE, NO_CONTROL_CHARACTERS } from "../../core/identifier.js";
import { COMMUNITY_LICENSE_KEY, licenseKeyIssue } from "../license-keys/license-key.js";
import { MAX_DOCUMENT_ID_CHARS, MAX_EVENTS_PER_REPORT, MAX_METADATA_KEYS, MAX_TEXT_CHARS, metadataSizeIssues, type UsageReport } from "../usage-report.js";

/**
 * The gRPC and Connect edge of the collect capability: a CollectRequest checked
 * and converted to a UsageReport in one place, or a VALIDATION_ERROR naming
 * every problem. Held to the same limits as the JSON body of /v1/collect
 * (usage-report.ts), which these callers reach the service without.
 */
export function usageReportFromCollectRequest(request: CollectRequest, limits: { metadataMaxBytes: number }): UsageReport {
  const issues: FieldIssue[] = [];
  const keyIssue = request.licenseKey ? licenseKeyIssue(request.licenseKey) : undefined;
  if (keyIssue) issues.push({ field: "licenseKey", issue: keyIssue });
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
    throw validationError(issues);
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
  if (issues.length > 0) throw validationError(issues);

  return {
    licenseKey: request.licenseKey || COMMUNITY_LICENSE_KEY,
    libraryVersion: request.libraryVersion,
    hostname: request.browserInfo?.hostname ?? "",
    metadata: request.metadata,
    events: request.events.map((event) => ({
      documentId: event.documentId,
      // proto3 has no null string: "" is "not known".
      documentCreatedAt: event.documentCreatedAt || null,
      openedAt: event.timestamp!.toISOString(),
    })),
  };
}
