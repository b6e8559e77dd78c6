// What both usage stores share: the date range of a usage query (validated,
// listed as days and months), and where a record counts (its UTC day and
// month, and the distinct member standing for its document).
import { hash } from "node:crypto";
import { CONTENT_ID_PATTERN } from "../../../clients/telemetry/document-id.js";
import { validationError, type FieldIssue } from "../../core/errors.js";
import { normalizedOpenedAt, type UsageRecord } from "../usage-record.js";
import { dimensionsOf, dimensionsSignature, OTHER_VALUES_ID, type Dimension } from "./dimensions.js";
import type { GroupedUsage, GroupUsage, PeriodUsage, Usage } from "./usage-store.js";

/** The longest range a usage query may span, in days (inclusive). */
export const MAX_RANGE_DAYS = 400;
/**
 * The longest range a query grouped by a metadata key may span: a month's bill.
 * Its work grows with the values of the key times the range's days, in one
 * atomic script on Redis.
 */
export const MAX_GROUPED_RANGE_DAYS = 31;

export interface UsageRange {
  from: string;
  to: string;
  /** Every day of the range, in order (YYYY-MM-DD). */
  days: string[];
  /** Every calendar month the range touches, in order (YYYY-MM). */
  months: string[];
  /**
   * Days and months whose sets together hold exactly the range's documents:
   * a month the range covers whole stands for its days (one smaller set to
   * union instead of up to 31).
   */
  buckets: string[];
}

const DAY_MS = 24 * 3600 * 1000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Validates `from` and `to` (YYYY-MM-DD, real dates, from ≤ to, at most MAX_RANGE_DAYS days) and lists the range. */
export function parseUsageRange(from: string, to: string, maxDays = MAX_RANGE_DAYS): UsageRange {
  const issues: FieldIssue[] = [];
  const start = parseDate("from", from, issues);
  const end = parseDate("to", to, issues);
  if (start !== undefined && end !== undefined) {
    if (start > end) issues.push({ field: "to", issue: "must not be before from" });
    else if ((end - start) / DAY_MS + 1 > maxDays) {
      issues.push({ field: "to", issue: `must be within ${maxDays} days of from (inclusive)${maxDays < MAX_RANGE_DAYS ? " when grouped" : ""}` });
    }
  }
  if (issues.length > 0) throw validationError(issues);

  const days: string[] = [];
  for (let t = start!; t <= end!; t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  const months = [...new Set(days.map((day) => day.slice(0, 7)))];
  const buckets = months.flatMap((month) => {
    const inMonth = days.filter((day) => day.startsWith(month));
    return inMonth.length === daysInMonth(month) ? [month] : inMonth;
  });
  return { from, to, days, months, buckets };
}

/** The Usage of a range from the distinct counts over it and the counts of each of its days and months. */
export function rangeUsage(
  range: UsageRange,
  distinct: Omit<PeriodUsage, "opens">,
  countsOf: (period: string) => PeriodUsage,
  span: { first?: string | null; last?: string | null },
): Usage {
  const byDay = range.days.map((date) => ({ date, ...countsOf(date) }));
  return {
    ...distinct,
    opens: byDay.reduce((sum, day) => sum + day.opens, 0),
    byDay,
    byMonth: range.months.map((month) => ({ month, ...countsOf(month) })),
    ...(span.first ? { firstSeen: span.first } : {}),
    ...(span.last ? { lastSeen: span.last } : {}),
  };
}

/** The counts of one value of a grouped query, as a store reads them; `months` in the range's order. */
export interface ValueCounts {
  valueId: string;
  value: string;
  documents: number;
  opens: number;
  months: { documents: number; opens: number }[];
}

/** The GroupedUsage of `key` from each value's counts: values with neither documents nor opens in the range left out, most documents first. */
export function groupedUsage(key: string, range: UsageRange, counts: ValueCounts[]): GroupedUsage {
  const groupOf = (c: ValueCounts): GroupUsage => ({
    value: c.value,
    documents: c.documents,
    opens: c.opens,
    byMonth: range.months.map((month, i) => ({ month, ...c.months[i]! })),
  });
  const used = counts.filter((c) => c.documents > 0 || c.opens > 0);
  const groups = used.filter((c) => c.valueId !== OTHER_VALUES_ID).map(groupOf);
  groups.sort((a, b) => b.documents - a.documents || b.opens - a.opens || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const other = used.find((c) => c.valueId === OTHER_VALUES_ID);
  if (!other) return { key, groups };
  const { value: _value, ...otherValues } = groupOf(other);
  return { key, groups, otherValues };
}

/** Where one record counts, and its normalized openedAt (comparable as text). */
export interface UsageEntry {
  eventId: string;
  licenseKey: string;
  day: string;
  month: string;
  member: string;
  /** Whether the documentId is a content id (SPEC 4.6), not an application's id or a random one per open. */
  contentId: boolean;
  dimensions: Dimension[];
  /** The same for every entry with the same dimensions. */
  dimensionsKey: string;
  openedAt: string;
}

/**
 * The records as entries; a record whose openedAt is not a date fails the
 * whole batch (VALIDATION_ERROR) before anything is written.
 */
export function usageEntries(records: UsageRecord[]): UsageEntry[] {
  const issues: FieldIssue[] = [];
  const entries = records.map((record, index) => {
    const openedAt = normalizedOpenedAt(record.openedAt) ?? "";
    if (!openedAt) issues.push({ field: `records[${index}].openedAt`, issue: "must be an ISO 8601 date between years 0 and 9999" });
    const day = openedAt.slice(0, 10);
    const dimensions = dimensionsOf(record.metadata);
    return {
      eventId: record.eventId,
      licenseKey: record.licenseKey,
      day,
      month: day.slice(0, 7),
      member: documentMember(record.documentId),
      contentId: CONTENT_ID_PATTERN.test(record.documentId),
      dimensions,
      dimensionsKey: dimensionsSignature(dimensions),
      openedAt,
    };
  });
  if (issues.length > 0) throw validationError(issues);
  return entries;
}

/** Members already hashed, by documentId: a document is opened again and again. Emptied when full. */
const members = new Map<string, string>();
const MAX_CACHED_MEMBERS = 50_000;

/**
 * A document within its license key's sets: its documentId (SPEC 4.6: the same
 * file opened twice is one document, whoever opens it), hashed so every member
 * has a bounded size: SHA-256 truncated to 16 bytes, base64url (22 characters).
 * The text hashed is the one usage stored before metadata became dimensions
 * used for a report without metadata, so those members still meet (see
 * docs/telemetry.md, "Usage stored before 0.2").
 */
export function documentMember(documentId: string): string {
  let member = members.get(documentId);
  if (member === undefined) {
    member = hash("sha256", `{"documentId":${JSON.stringify(documentId)},"metadata":{}}`, "buffer").subarray(0, 16).toString("base64url");
    if (members.size >= MAX_CACHED_MEMBERS) members.clear();
    members.set(documentId, member);
  }
  return member;
}

function parseDate(field: string, value: string, issues: FieldIssue[]): number | undefined {
  if (typeof value !== "string" || !DATE.test(value)) {
    issues.push({ field, issue: "must be a date YYYY-MM-DD" });
    return undefined;
  }
  const time = Date.parse(`${value}T00:00:00Z`);
  if (Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== value) {
    issues.push({ field, issue: "is not a calendar date" });
    return undefined;
  }
  return time;
}

function daysInMonth(month: string): number {
  const [year, monthNumber] = month.split("-").map(Number);
  if (monthNumber === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(monthNumber) ? 30 : 31;
}
