import type { CollectRequest } from "../../../gen/ts-proto/docservice/v1/telemetry.js";
import { validationError, type FieldIssue } from "../../core/errors.js";
import { CONTROL_CHARACTERS_ISSUE, NO_CONTROL_CHARACTERS } from "../../core/identifier.js";
import { COMMUNITY_LICENSE_KEY, licenseKeyIssue } from "../license-keys/license-key.js";
import { boundMetadata } from "../../../clients/telemetry/metadata.js";
import { eventTimeWindow, isWithinEventTimeWindow, REPORT_LIMITS } from "../../../clients/telemetry/report-limits.js";
import type { UsageReport } from "../usage-report.js";

const { maxDocumentIdChars, maxEvents, maxTextChars } = REPORT_LIMITS;

/**
 * The gRPC and Connect edge of the collect capability: a CollectRequest checked
 * and converted to a UsageReport in one place, or a VALIDATION_ERROR naming
 * every problem. Held to the same limits as the JSON body of /v1/collect
 * (usage-report.ts), which these callers reach the service without; event
 * times too, by the window `now` (ms since the epoch) decides.
 */
export function usageReportFromCollectRequest(request: CollectRequest, now: number = Date.now()): UsageReport {
  const window = eventTimeWindow(now);
  const issues: FieldIssue[] = [];
  const keyIssue = request.licenseKey ? licenseKeyIssue(request.licenseKey) : undefined;
  if (keyIssue) issues.push({ field: "licenseKey", issue: keyIssue });
  const tooLong = (field: string, text: string, max: number) => {
    if (text.length > max) issues.push({ field, issue: `must be at most ${max} characters` });
  };
  tooLong("libraryVersion", request.libraryVersion, maxTextChars.libraryVersion);
  tooLong("browserInfo.userAgent", request.browserInfo?.userAgent ?? "", maxTextChars.userAgent);
  tooLong("browserInfo.currentUrl", request.browserInfo?.currentUrl ?? "", maxTextChars.currentUrl);
  tooLong("browserInfo.hostname", request.browserInfo?.hostname ?? "", maxTextChars.hostname);

  if (request.events.length < 1 || request.events.length > maxEvents) {
    issues.push({ field: "events", issue: `must have 1 to ${maxEvents} events` });
    throw validationError(issues);
  }
  request.events.forEach((event, i) => {
    if (!event.timestamp) issues.push({ field: `events[${i}].timestamp`, issue: "is required" });
    else if (!isWithinEventTimeWindow(window, event.timestamp.getTime())) issues.push({ field: `events[${i}].timestamp`, issue: window.issue });
    if (!event.documentId || event.documentId.length > maxDocumentIdChars) {
      issues.push({ field: `events[${i}].documentId`, issue: `must be 1 to ${maxDocumentIdChars} characters` });
    } else if (!NO_CONTROL_CHARACTERS.test(event.documentId)) {
      issues.push({ field: `events[${i}].documentId`, issue: CONTROL_CHARACTERS_ISSUE });
    }
    tooLong(`events[${i}].documentCreatedAt`, event.documentCreatedAt, maxTextChars.documentCreatedAt);
  });
  if (issues.length > 0) throw validationError(issues);
  const metadata = boundMetadata(request.metadata);

  return {
    licenseKey: request.licenseKey || COMMUNITY_LICENSE_KEY,
    libraryVersion: request.libraryVersion,
    hostname: request.browserInfo?.hostname ?? "",
    metadata: metadata.metadata ?? {},
    metadataDropped: metadata.dropped,
    events: request.events.map((event) => ({
      documentId: event.documentId,
      // proto3 has no null string: "" is "not known".
      documentCreatedAt: event.documentCreatedAt || null,
      openedAt: event.timestamp!.toISOString(),
    })),
  };
}
