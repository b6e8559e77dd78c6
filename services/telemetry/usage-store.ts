import type { UsageRecord } from "./usage-record.js";

export interface DailyUsage {
  /** YYYY-MM-DD (UTC). */
  date: string;
  /** Exact distinct documents that day. */
  documents: number;
  opens: number;
}

export interface MonthlyUsage {
  /** YYYY-MM (UTC). */
  month: string;
  /** Exact distinct documents in the whole calendar month. */
  documents: number;
  opens: number;
}

export interface Usage {
  /** Exact distinct documents over the whole range. */
  documents: number;
  opens: number;
  /** Every day of the range, in order, zeros included. */
  byDay: DailyUsage[];
  /** Every calendar month the range touches, in order, counted over the whole month. */
  byMonth: MonthlyUsage[];
  /** First and last openedAt ever recorded for the key (ISO 8601), undefined when none. */
  firstSeen?: string;
  lastSeen?: string;
}

/**
 * Exact usage counts per license key (billing: sets, never estimates).
 * A document is distinct by its documentId together with the report's
 * metadata (the same id under different metadata is another document).
 */
export interface UsageStore {
  /**
   * Applies records idempotently: an eventId already applied (within at
   * least 7 days) is skipped, so redelivery and spool replays never count twice.
   */
  record(records: UsageRecord[]): Promise<void>;
  /** `from` and `to` are YYYY-MM-DD, inclusive, from ≤ to. */
  usage(licenseKey: string, from: string, to: string): Promise<Usage>;
  health(): Promise<void>;
  close(): Promise<void>;
}
