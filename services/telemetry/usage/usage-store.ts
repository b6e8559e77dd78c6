import type { UsageRecord } from "../usage-record.js";

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
 * Records read from one partition of the usage topic: every offset from
 * `firstOffset` to `lastOffset` belongs to the batch, including messages that
 * are not usage records (they carry no record but still move the fence).
 */
export interface PartitionBatch {
  topic: string;
  partition: number;
  firstOffset: number;
  lastOffset: number;
  /** In offset order. */
  records: { offset: number; record: UsageRecord }[];
}

/**
 * What applying a partition batch did. `behind`: the store's fence for the
 * partition is before the batch (the store lost recent state, for example
 * Redis restored from an older snapshot), so nothing was applied; the records
 * from `fence + 1` should be read again, or applied with `acceptGap` when
 * they no longer exist.
 */
export type PartitionBatchResult = { applied: number } | { behind: number };

/** How long an eventId applied by record() is remembered. */
export const EVENT_ID_MEMORY_SECONDS = 7 * 24 * 3600;

/**
 * Exact usage counts per license key (billing: sets, never estimates).
 * A document is distinct by its documentId together with the report's
 * metadata (the same id under different metadata is another document).
 *
 * Records arrive one of two ways. From Kafka, a partition batch at a time,
 * fenced by offsets: the last applied offset of each partition is stored in
 * the same atomic write as the counts, so redelivery is skipped without
 * remembering events. Without Kafka, straight from the telemetry service:
 * each eventId is remembered for EVENT_ID_MEMORY_SECONDS and applied once.
 */
export interface UsageStore {
  applyPartitionBatch(batch: PartitionBatch, options?: { acceptGap?: boolean }): Promise<PartitionBatchResult>;
  /**
   * Forgets the fence of each partition at or beyond its high watermark: the
   * topic was deleted and created again, so its offsets started over.
   * Returns the partitions whose fence was dropped.
   */
  dropStaleFences(topic: string, highWatermarks: Map<number, number>): Promise<number[]>;
  record(records: UsageRecord[]): Promise<void>;
  /** `from` and `to` are YYYY-MM-DD, inclusive, from ≤ to. */
  usage(licenseKey: string, from: string, to: string): Promise<Usage>;
  health(): Promise<void>;
  close(): Promise<void>;
}
