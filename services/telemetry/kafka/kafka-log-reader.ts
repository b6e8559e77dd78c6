import { randomUUID } from "node:crypto";
import type { Admin, Kafka } from "kafkajs";
import type { LogPosition } from "../intake/log-position.js";
import { parseUsageRecord } from "../usage-record.js";

const READ_TIMEOUT_MS = 60_000;
/** A read window unused this long is forgotten (its eventIds are memory). */
const FORGET_AFTER_MS = 60_000;

/** What was read of one partition: the eventIds at offsets from..to-1. */
interface ReadWindow {
  from: number;
  to: number;
  eventIds: Set<string>;
}

/**
 * Reads which eventIds the usage topic holds after a position, for replays
 * from the spool. Reads are incremental: spool segments are replayed one
 * after another with positions from about the same time, so a window already
 * read is extended to the end of the log rather than read again.
 * kafkajs only reads through consumer groups: each read joins a throwaway
 * group, seeks, and deletes the group afterwards.
 */
export class KafkaLogReader {
  private readonly windows = new Map<number, ReadWindow>();
  private forgetTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly topic: string,
    private readonly groupPrefix: string,
  ) {}

  async alreadyLogged(eventIds: string[], since: LogPosition): Promise<string[]> {
    await this.admin.connect();
    const partitions = await this.admin.fetchTopicOffsets(this.topic);
    const reads = new Map<number, { from: number; to: number }>();
    const ends = new Map(partitions.map((p) => [p.partition, p.high]));
    for (const { partition, low, high } of partitions) {
      const from = Math.max(since[partition] ?? 0, Number(low));
      const to = Number(high);
      let window = this.windows.get(partition);
      if (!window || window.from > from || window.to < from) this.windows.set(partition, (window = { from, to: from, eventIds: new Set() }));
      if (window.to < to) reads.set(partition, { from: window.to, to });
    }
    if (reads.size > 0) await this.read(reads, ends);
    this.scheduleForget();
    const windows = [...this.windows.values()];
    return eventIds.filter((id) => windows.some((window) => window.eventIds.has(id)));
  }

  clear(): void {
    this.windows.clear();
  }

  /** Reads each partition of `reads` over its range; every other partition of the topic starts at its end (`ends`), so nothing else is fetched. */
  private async read(reads: Map<number, { from: number; to: number }>, ends: Map<number, string>): Promise<void> {
    const groupId = `${this.groupPrefix}-${randomUUID()}`;
    const consumer = this.kafka.consumer({ groupId, maxWaitTimeInMs: 100, retry: { retries: 3 } });
    const remaining = new Set(reads.keys());
    let timer: NodeJS.Timeout | undefined;
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: this.topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`reading back ${this.topic} took over ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS);
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              const read = reads.get(batch.partition);
              const window = this.windows.get(batch.partition);
              if (!read || !window || !remaining.has(batch.partition)) return;
              for (const message of batch.messages) {
                const offset = Number(message.offset);
                if (offset < read.from || offset >= read.to) continue;
                const record = parseUsageRecord(message.value?.toString("utf8") ?? "");
                if (record) window.eventIds.add(record.eventId);
              }
              if (Number(batch.lastOffset()) >= read.to - 1) {
                window.to = read.to;
                remaining.delete(batch.partition);
                if (remaining.size === 0) resolve();
              }
            },
          })
          .then(() => {
            for (const [partition, end] of ends) consumer.seek({ topic: this.topic, partition, offset: String(reads.get(partition)?.from ?? end) });
          }, reject);
      });
    } finally {
      clearTimeout(timer);
      await consumer.disconnect().catch(() => {});
      await this.admin.deleteGroups([groupId]).catch(() => {});
    }
  }

  private scheduleForget(): void {
    clearTimeout(this.forgetTimer);
    this.forgetTimer = setTimeout(() => this.clear(), FORGET_AFTER_MS);
    this.forgetTimer.unref();
  }
}
