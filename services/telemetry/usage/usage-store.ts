import type { UsageRecord } from "../usage-record.js";

/** Counts of one period. */
export interface PeriodUsage {
  /** Exact distinct documents. */
  documents: number;
  /**
   * Of them, those whose documentId is not a content id (SPEC 4.6): an
   * application's own id, or a random one per open, which bills every open
   * of a file as a document of its own.
   */
  documentsWithoutContentId: number;
  opens: number;
}

export interface DailyUsage extends PeriodUsage {
  /** YYYY-MM-DD (UTC). */
  date: string;
}

export interface MonthlyUsage extends PeriodUsage {
  /** YYYY-MM (UTC), counted over the whole calendar month. */
  month: string;
}

export interface Usage extends PeriodUsage {
  /** Every day of the range, in order, zeros included. */
  byDay: DailyUsage[];
  /** Every calendar month the range touches, in order, counted over the whole month. */
  byMonth: MonthlyUsage[];
  /** First and last openedAt ever recorded for the key (ISO 8601), undefined when none. */
  firstSeen?: string;
  lastSeen?: string;
}

/** Documents and opens of one value of a metadata key. */
export interface GroupUsage {
  /** The value as text: a string as it is, anything else as JSON. */
  value: string;
  /** Exact distinct documents over the range. */
  documents: number;
  opens: number;
  /** Every calendar month the range touches, counted over the whole month. */
  byMonth: { month: string; documents: number; opens: number }[];
}

/** Usage of a license key per value of one metadata key. */
export interface GroupedUsage {
  key: string;
  /** Every value the range's reports carried, most documents first. */
  groups: GroupUsage[];
  /** The values beyond MAX_DIMENSION_VALUES in a month, counted together; absent when there were none. */
  otherValues?: Omit<GroupUsage, "value">;
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
 * A document is its documentId (SPEC 4.6); each top-level key of a report's
 * metadata is a dimension its documents and opens are also counted by.
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
  /** Usage per value of the metadata key `key` (at most MAX_GROUPED_RANGE_DAYS days). */
  usageBy(licenseKey: string, from: string, to: string, key: string): Promise<GroupedUsage>;
  health(): Promise<void>;
  close(): Promise<void>;
}
