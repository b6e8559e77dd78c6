/**
 * The JSON edge of the collect capability: the body of `POST /v1/collect` as
 * clients send it, the reference client included (`superdocVersion` is its name
 * for `libraryVersion`), checked and converted to a UsageReport in one place.
 * Unknown fields are ignored, wrong types are 400s naming the field.
 *
 * One JSON Schema both documents the route (/openapi.json) and validates it,
 * compiled by Ajv: this is the hottest route, and a compiled check is much
 * cheaper per report than the equivalent zod schema (see bench/README.md,
 * "Collect body check").
 */
import { Ajv, type ErrorObject } from "ajv";
import { validationError, type FieldIssue } from "../../core/errors.js";
import { CONTROL_CHARACTERS_ISSUE, NO_CONTROL_CHARACTERS } from "../../core/identifier.js";
import { boundMetadata, METADATA_LIMITS } from "../../../clients/telemetry/metadata.js";
import { eventTimeWindow, isWithinEventTimeWindow, REPORT_LIMITS } from "../../../clients/telemetry/report-limits.js";
import type { UsageReport } from "../usage-report.js";
import { normalizedOpenedAt } from "../usage-record.js";

const MAX_TEXT_CHARS = REPORT_LIMITS.maxTextChars;

/** The body once it has passed the schema (Ajv has filled in the defaults). */
interface CollectRequestJson {
  libraryVersion?: string;
  superdocVersion?: string;
  browserInfo: { userAgent: string; currentUrl: string; hostname: string; screenSize: { width: number; height: number } };
  metadata?: unknown;
  events: Array<{ timestamp: string; documentId: string; documentCreatedAt: string | null }>;
}

const DATE = "\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])";
const OFFSET = "(Z|[+-]([01]\\d|2[0-3]):?[0-5]\\d)";
/** ISO 8601 with milliseconds, as the reference client's `new Date().toISOString()`. */
const TIMESTAMP = `^${DATE}T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d\\.\\d{3}${OFFSET}$`;
/** ISO 8601 date, or date and time at any precision. */
const DATE_OR_TIME = `^${DATE}(T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d+)?)?${OFFSET})?$`;

const text = (maxLength: number) => ({ type: "string", maxLength });
const pixels = { type: "integer", minimum: 0, maximum: REPORT_LIMITS.maxScreenPixels, default: 0 };

/** JSON Schema of the body (Ajv's `default`s fill in what an older or non-browser client leaves out). */
export const collectRequestJsonSchema = {
  type: "object",
  required: ["events"],
  properties: {
    libraryVersion: { ...text(MAX_TEXT_CHARS.libraryVersion), description: "Also accepted as `superdocVersion`; one of the two is required." },
    superdocVersion: text(MAX_TEXT_CHARS.libraryVersion),
    browserInfo: {
      type: "object",
      default: {},
      properties: {
        userAgent: { ...text(MAX_TEXT_CHARS.userAgent), default: "" },
        currentUrl: { ...text(MAX_TEXT_CHARS.currentUrl), default: "" },
        hostname: { ...text(MAX_TEXT_CHARS.hostname), default: "" },
        screenSize: { type: "object", default: {}, properties: { width: pixels, height: pixels } },
      },
    },
    metadata: {
      description:
        `Any JSON object (or null): dimensions to count usage by (\`groupBy=metadata.<key>\` of /v1/usage), never part of a document's identity. ` +
        `At most ${METADATA_LIMITS.maxBytes} bytes as JSON, ${METADATA_LIMITS.maxDepth} levels deep and ${METADATA_LIMITS.maxKeys} keys, keys of at most ${METADATA_LIMITS.maxKeyChars} characters: ` +
        "what goes beyond them is left out and listed in `metadataDropped`, and the events are accepted all the same.",
    },
    events: {
      type: "array",
      minItems: 1,
      maxItems: REPORT_LIMITS.maxEvents,
      items: {
        type: "object",
        required: ["timestamp", "documentId"],
        properties: {
          timestamp: {
            type: "string",
            pattern: TIMESTAMP,
            description: `When the document was opened (the client's clock): from ${REPORT_LIMITS.eventTime.earliest} to a day past the server's clock.`,
            "x-issue": "must be an ISO 8601 time with milliseconds, e.g. 2026-11-21T09:30:00.000Z",
          },
          documentId: { type: "string", minLength: 1, maxLength: REPORT_LIMITS.maxDocumentIdChars, pattern: NO_CONTROL_CHARACTERS.source, "x-issue": CONTROL_CHARACTERS_ISSUE },
          documentCreatedAt: {
            type: ["string", "null"],
            maxLength: MAX_TEXT_CHARS.documentCreatedAt,
            pattern: DATE_OR_TIME,
            default: null,
            "x-issue": "must be an ISO 8601 time or null",
          },
        },
      },
    },
  },
} as const;

// `x-issue`: what a client is told when a value breaks its `pattern` (the regex itself would not help them).
const ajv = new Ajv({ allErrors: true, useDefaults: true, allowUnionTypes: true, verbose: true });
ajv.addKeyword({ keyword: "x-issue", schemaType: "string" });
const validate = ajv.compile<CollectRequestJson>(collectRequestJsonSchema);

/**
 * The body as the UsageReport of `licenseKey` (already checked by the caller:
 * it comes in a header, see telemetry-routes.ts), or a VALIDATION_ERROR naming
 * every problem. Fills in defaults in `body` in place. `now` (ms since the
 * epoch, when the request arrived) decides the event times accepted
 * (eventTimeWindow, the client library's own rule).
 */
export function usageReportFromJson(body: unknown, licenseKey: string, now: number = Date.now()): UsageReport {
  const window = eventTimeWindow(now);
  if (!validate(body)) throw validationError((validate.errors ?? []).map(fieldIssue));
  const issues: FieldIssue[] = [];
  const libraryVersion = body.libraryVersion ?? body.superdocVersion;
  if (libraryVersion === undefined) issues.push({ field: "libraryVersion", issue: "is required (or superdocVersion)" });
  // The pattern allows day 31 in every month; Date would roll 2026-02-31 over to March 3 and count the open on the wrong day.
  // The pattern admits any UTC offset; the day counted is the UTC one, which must be within the window.
  const openedAt = body.events.map((event, i) => {
    if (!isCalendarDate(event.timestamp)) return void issues.push({ field: `events[${i}].timestamp`, issue: "is not a real calendar date" });
    const utc = normalizedOpenedAt(event.timestamp);
    if (utc === undefined || !isWithinEventTimeWindow(window, Date.parse(utc))) return void issues.push({ field: `events[${i}].timestamp`, issue: window.issue });
    return utc;
  });
  if (issues.length > 0) throw validationError(issues);
  const metadata = boundMetadata(body.metadata);
  return {
    licenseKey,
    libraryVersion: libraryVersion!,
    hostname: body.browserInfo.hostname,
    metadata: metadata.metadata ?? {},
    metadataDropped: metadata.dropped,
    events: body.events.map((event, i) => ({ documentId: event.documentId, documentCreatedAt: event.documentCreatedAt, openedAt: openedAt[i]! })),
  };
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether the YYYY-MM-DD at the start of `text` (month 01-12 and day 01-31, as the pattern checked) is a day that exists (no February 30). */
function isCalendarDate(text: string): boolean {
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return Number(text.slice(8, 10)) <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]);
}

/** "/events/0/timestamp" → "events[0].timestamp"; the whole body is "body". */
function fieldIssue(error: ErrorObject): FieldIssue {
  const parts = error.instancePath.split("/").slice(1).map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (error.keyword === "required") parts.push(String(error.params.missingProperty));
  const field = parts.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), "") || "body";
  const custom = error.keyword === "pattern" ? (error.parentSchema as { "x-issue"?: string } | undefined)?.["x-issue"] : undefined;
  return { field, issue: custom ?? (error.keyword === "required" ? "is required" : (error.message ?? "is not valid")) };
}
