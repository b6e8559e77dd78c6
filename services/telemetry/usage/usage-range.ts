// What both usage stores share: the date range of a usage query (validated,
// listed as days and months), and where a record counts (its UTC day and
// month, and the distinct member standing for its document).
import { hash } from "node:crypto";
import { validationError, type FieldIssue } from "../../core/errors.js";
import { normalizedOpenedAt, type UsageRecord } from "../usage-record.js";
import type { Usage } from "./usage-store.js";

/** The longest range a usage query may span, in days (inclusive). */
export const MAX_RANGE_DAYS = 400;

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
export function parseUsageRange(from: string, to: string): UsageRange {
  const issues: FieldIssue[] = [];
  const start = parseDate("from", from, issues);
  const end = parseDate("to", to, issues);
  if (start !== undefined && end !== undefined) {
    if (start > end) issues.push({ field: "to", issue: "must not be before from" });
    else if ((end - start) / DAY_MS + 1 > MAX_RANGE_DAYS) {
      issues.push({ field: "to", issue: `must be within ${MAX_RANGE_DAYS} days of from (inclusive)` });
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

export interface PeriodCounts {
  documents: number;
  opens: number;
}

/** The Usage of a range from the distinct count over it and the counts of each of its days and months. */
export function rangeUsage(
  range: UsageRange,
  documents: number,
  countsOf: (period: string) => PeriodCounts,
  span: { first?: string | null; last?: string | null },
): Usage {
  const byDay = range.days.map((date) => ({ date, ...countsOf(date) }));
  return {
    documents,
    opens: byDay.reduce((sum, day) => sum + day.opens, 0),
    byDay,
    byMonth: range.months.map((month) => ({ month, ...countsOf(month) })),
    ...(span.first ? { firstSeen: span.first } : {}),
    ...(span.last ? { lastSeen: span.last } : {}),
  };
}

/** Where one record counts, and its normalized openedAt (comparable as text). */
export interface UsageEntry {
  eventId: string;
  licenseKey: string;
  day: string;
  month: string;
  member: string;
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
    return { eventId: record.eventId, licenseKey: record.licenseKey, day, month: day.slice(0, 7), member: documentMember(record), openedAt };
  });
  if (issues.length > 0) throw validationError(issues);
  return entries;
}

/** Members already hashed, by canonical document: a document is opened again and again. Emptied when full. */
const members = new Map<string, string>();
const MAX_CACHED_MEMBERS = 50_000;

/**
 * What makes a document distinct: its documentId with the report's metadata
 * (canonical JSON, keys sorted), hashed so every set member has a bounded
 * size: SHA-256 truncated to 16 bytes, base64url (22 characters).
 */
export function documentMember(record: Pick<UsageRecord, "documentId" | "metadata">): string {
  const metadata = record.metadata ?? {};
  const fields = Object.keys(metadata)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${JSON.stringify(metadata[key])}`);
  const canonical = `{"documentId":${JSON.stringify(record.documentId)},"metadata":{${fields.join(",")}}}`;
  let member = members.get(canonical);
  if (member === undefined) {
    member = hash("sha256", canonical, "buffer").subarray(0, 16).toString("base64url");
    if (members.size >= MAX_CACHED_MEMBERS) members.clear();
    members.set(canonical, member);
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
