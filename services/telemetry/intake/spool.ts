import { mkdirSync, readdirSync, statSync } from "node:fs";
import { open, readFile, rm, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { ServiceError } from "../../core/errors.js";
import { earliest, samePosition, type LogPosition } from "./log-position.js";
import { parseUsageRecord, type UsageRecord } from "../usage-record.js";

export interface SpoolOptions {
  /** Total size of the spool files; an append beyond it is refused with 503. */
  maxBytes: number;
}

/** A closed segment, oldest first: its records and how to drop it once they are delivered. */
export interface SpoolSegment {
  records: UsageRecord[];
  /** The log's position before any of its records was first written (empty for a segment of an older version: nothing known). */
  since: LogPosition;
  remove(): Promise<void>;
}

/** A line of a segment that is not a record: the log's position before the records after it were written. */
interface SinceLine {
  since: LogPosition;
}

const SEGMENT = /^(\d{12})\.jsonl$/;
const segmentName = (sequence: number) => `${String(sequence).padStart(12, "0")}.jsonl`;

/**
 * A durable local queue of usage records: append-only JSON-lines segment
 * files, fsynced before an append resolves (so a 202 is never answered for a
 * record a crash could lose). Concurrent appends share one write and one
 * fsync (group commit). Each append carries the log's position from before
 * its records were first written anywhere; a segment keeps the earliest
 * (`{"since":…}` lines), so a replay can first read back what is in the log
 * after it. Readers take closed segments oldest first and delete each once
 * delivered; a crash between delivery and deletion re-delivers it, and the
 * read-back absorbs it. A torn last line, from a crash mid-write, was never
 * acknowledged and is skipped.
 */
export class Spool {
  private current: FileHandle | undefined;
  private currentSequence: number;
  private currentBytes = 0;
  /** The earliest position written to the current segment, once it has any. */
  private currentSince: LogPosition | undefined;
  private closedBytes = 0;
  private pending: { lines: string; since: LogPosition; resolve(): void; reject(error: unknown): void }[] = [];
  private flushing: Promise<void> | undefined;

  private constructor(
    private readonly directory: string,
    private readonly options: SpoolOptions,
    private closed: number[],
  ) {
    this.currentSequence = (closed.at(-1) ?? 0) + 1;
    this.closedBytes = closed.reduce((total, sequence) => total + statSync(this.path(sequence)).size, 0);
  }

  /** Opens the spool in `directory`; segments left by an earlier run are kept for delivery. */
  static open(directory: string, options: SpoolOptions): Spool {
    mkdirSync(directory, { recursive: true });
    const sequences = readdirSync(directory)
      .map((name) => SEGMENT.exec(name)?.[1])
      .filter((match): match is string => match !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    return new Spool(directory, options, sequences);
  }

  get bytes(): number {
    return this.closedBytes + this.currentBytes;
  }

  get isEmpty(): boolean {
    return this.bytes === 0;
  }

  /**
   * Resolves once the records are on disk (fsynced). `since`: the log's
   * position before they were first written to it (or now, if never).
   * Throws UNAVAILABLE (503) when the spool is full.
   */
  append(records: UsageRecord[], since: LogPosition): Promise<void> {
    const lines = records.map((record) => `${JSON.stringify(record)}\n`).join("");
    const queued = this.pending.reduce((total, entry) => total + entry.lines.length, 0);
    if (this.bytes + queued + Buffer.byteLength(lines) > this.options.maxBytes) {
      return Promise.reject(
        new ServiceError("UNAVAILABLE", "Usage events cannot be stored right now (the local spool is full); retry later.", { retryAfterSeconds: 30 }),
      );
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ lines, since, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /**
   * The oldest segment's records. The segment being written is closed first
   * when it is the only one, so everything appended so far can be delivered.
   */
  async oldest(): Promise<SpoolSegment | undefined> {
    if (this.closed.length === 0) await this.rotate();
    const sequence = this.closed[0];
    if (sequence === undefined) return undefined;
    const file = this.path(sequence);
    const text = await readFile(file, "utf8");
    const lines = text.split("\n");
    lines.pop(); // "" after the last newline, or a torn line that was never acknowledged
    const records: UsageRecord[] = [];
    let since: LogPosition | undefined;
    for (const line of lines) {
      if (line.startsWith('{"since":')) {
        const position = parseSince(line);
        since = since === undefined ? position : earliest(since, position);
      } else {
        const record = parseUsageRecord(line);
        if (record) records.push(record);
      }
    }
    return {
      records,
      since: since ?? {},
      remove: async () => {
        await rm(file, { force: true });
        this.closed = this.closed.filter((s) => s !== sequence);
        this.closedBytes -= Buffer.byteLength(text);
      },
    };
  }

  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.current?.close();
    this.current = undefined;
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        this.current ??= await open(this.path(this.currentSequence), "a");
        const data = batch.map((entry) => this.sinceLine(entry.since) + entry.lines).join("");
        await this.current.appendFile(data);
        await this.current.datasync();
        this.currentBytes += Buffer.byteLength(data);
        batch.forEach((entry) => entry.resolve());
      } catch (error) {
        this.currentSince = undefined; // the next append writes its position again
        batch.forEach((entry) => entry.reject(error));
      }
    }
    this.flushing = undefined;
  }

  /** Closes the segment being written (if it has anything) so readers can take it. */
  private async rotate(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.currentBytes === 0) return;
    // State first, then the await: an append arriving meanwhile opens the next segment.
    const handle = this.current;
    this.current = undefined;
    this.closed.push(this.currentSequence);
    this.closedBytes += this.currentBytes;
    this.currentSequence++;
    this.currentBytes = 0;
    this.currentSince = undefined;
    await handle?.close();
  }

  /** A since line when `since` is earlier than what the current segment holds (always for its first append), else "". */
  private sinceLine(since: LogPosition): string {
    const merged = this.currentSince === undefined ? since : earliest(this.currentSince, since);
    if (this.currentSince !== undefined && samePosition(merged, this.currentSince)) return "";
    this.currentSince = merged;
    return `${JSON.stringify({ since: merged } satisfies SinceLine)}\n`;
  }

  private path(sequence: number): string {
    return join(this.directory, segmentName(sequence));
  }
}


/** A since line's position; a damaged one knows nothing (the replay then reads the whole log). */
function parseSince(line: string): LogPosition {
  try {
    const { since } = JSON.parse(line) as SinceLine;
    return Object.values(since).every((offset) => Number.isSafeInteger(offset)) ? since : {};
  } catch {
    return {};
  }
}
