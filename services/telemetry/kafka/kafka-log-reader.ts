import { randomUUID } from "node:crypto";
import { Admin, Consumer, MessagesStreamModes, stringDeserializers, type BaseOptions, type Message } from "@platformatic/kafka";
import type { LogPosition } from "../intake/log-position.js";
import { parseUsageRecords } from "../usage-record.js";
import { topicOffsets } from "./topic-offsets.js";

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
 * read is extended to the end of the log rather than read again. Each read
 * is a throwaway consumer group that starts every partition at the offset
 * asked for (the others at their end) and is deleted afterwards.
 */
export class KafkaLogReader {
  private readonly windows = new Map<number, ReadWindow>();
  private forgetTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: BaseOptions,
    private readonly admin: Admin,
    private readonly topic: string,
    private readonly groupPrefix: string,
  ) {}

  async alreadyLogged(eventIds: string[], since: LogPosition): Promise<string[]> {
    const partitions = await topicOffsets(this.admin, this.topic);
    const reads = new Map<number, { from: number; to: number }>();
    const ends = new Map(partitions.map((p) => [p.partition, p.high]));
    for (const { partition, low, high } of partitions) {
      const from = Math.max(since[partition] ?? 0, low);
      let window = this.windows.get(partition);
      if (!window || window.from > from || window.to < from) this.windows.set(partition, (window = { from, to: from, eventIds: new Set() }));
      if (window.to < high) reads.set(partition, { from: window.to, to: high });
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
  private async read(reads: Map<number, { from: number; to: number }>, ends: Map<number, number>): Promise<void> {
    const groupId = `${this.groupPrefix}-${randomUUID()}`;
    const consumer = new Consumer({ ...this.options, groupId, deserializers: stringDeserializers, autocommit: false, maxWaitTime: 100 });
    const remaining = new Set(reads.keys());
    let timer: NodeJS.Timeout | undefined;
    try {
      const offsets = [...ends].map(([partition, end]) => ({ topic: this.topic, partition, offset: BigInt(reads.get(partition)?.from ?? end) }));
      const stream = await consumer.consume({ topics: [this.topic], mode: MessagesStreamModes.MANUAL, offsets });
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`reading back ${this.topic} took over ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS);
        stream.once("error", reject);
        stream.on("data", (message: Message<string, string, string, string>) => {
          const read = reads.get(message.partition);
          const window = this.windows.get(message.partition);
          if (!read || !window || !remaining.has(message.partition)) return;
          const offset = Number(message.offset);
          if (offset >= read.from && offset < read.to) {
            for (const record of parseUsageRecords(message.value ?? "")) window.eventIds.add(record.eventId);
          }
          if (offset >= read.to - 1) {
            window.to = read.to;
            remaining.delete(message.partition);
            if (remaining.size === 0) resolve();
          }
        });
      });
    } finally {
      clearTimeout(timer);
      await consumer.close(true).catch(() => {});
      await this.admin.deleteGroups({ groups: [groupId] }).catch(() => {});
    }
  }

  private scheduleForget(): void {
    clearTimeout(this.forgetTimer);
    this.forgetTimer = setTimeout(() => this.clear(), FORGET_AFTER_MS);
    this.forgetTimer.unref();
  }
}
