import { mkdirSync, readdirSync, statSync } from "node:fs";
import { open, readFile, rm, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { ServiceError } from "../core/errors.js";
import { parseUsageRecord, type UsageRecord } from "./usage-record.js";

export interface SpoolOptions {
  /** Total size of the spool files; an append beyond it is refused with 503. */
  maxBytes: number;
}

/** A closed segment, oldest first: its records and how to drop it once they are delivered. */
export interface SpoolSegment {
  records: UsageRecord[];
  remove(): Promise<void>;
}

const SEGMENT = /^(\d{12})\.jsonl$/;
const segmentName = (sequence: number) => `${String(sequence).padStart(12, "0")}.jsonl`;

/**
 * A durable local queue of usage records: append-only JSON-lines segment
 * files, fsynced before an append resolves (so a 202 is never answered for a
 * record a crash could lose). Concurrent appends share one write and one
 * fsync (group commit). Readers take closed segments oldest first and delete
 * each once delivered; a crash between delivery and deletion re-delivers it,
 * which the aggregator absorbs (it applies each eventId once). A torn last
 * line, from a crash mid-write, was never acknowledged and is skipped.
 */
export class Spool {
  private current: FileHandle | undefined;
  private currentSequence: number;
  private currentBytes = 0;
  private closedBytes = 0;
  private pending: { lines: string; resolve(): void; reject(error: unknown): void }[] = [];
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

  /** Resolves once the records are on disk (fsynced). Throws UNAVAILABLE (503) when the spool is full. */
  append(records: UsageRecord[]): Promise<void> {
    const lines = records.map((record) => `${JSON.stringify(record)}\n`).join("");
    const queued = this.pending.reduce((total, entry) => total + entry.lines.length, 0);
    if (this.bytes + queued + Buffer.byteLength(lines) > this.options.maxBytes) {
      return Promise.reject(
        new ServiceError("UNAVAILABLE", "Usage events cannot be stored right now (the local spool is full); retry later.", { retryAfterSeconds: 30 }),
      );
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ lines, resolve, reject });
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
    return {
      records: lines.map(parseUsageRecord).filter((record) => record !== undefined),
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
        const data = batch.map((entry) => entry.lines).join("");
        await this.current.appendFile(data);
        await this.current.datasync();
        this.currentBytes += Buffer.byteLength(data);
        batch.forEach((entry) => entry.resolve());
      } catch (error) {
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
    await handle?.close();
  }

  private path(sequence: number): string {
    return join(this.directory, segmentName(sequence));
  }
}

