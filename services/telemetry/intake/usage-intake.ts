import { withDeadline } from "../../core/deadline.js";
import type { Logger } from "../../core/logger.js";
import type { RecordSink } from "./record-sink.js";
import type { ReplayGuard } from "./replay-guard.js";
import type { Spool } from "./spool.js";
import type { UsageRecord } from "../usage-record.js";

export interface UsageIntakeOptions {
  /** How long a report waits for the sink before its records go to the spool instead. */
  directTimeoutMs: number;
  /** After a failed or slow write, how long new reports go straight to the spool. */
  retryDirectAfterMs: number;
}

/** Records per write when the spool is delivered. */
const DELIVERY_CHUNK = 1000;
const DELIVERY_CHECK_MS = 500;
const MAX_BACKOFF_MS = 10_000;

/**
 * Makes accepted usage records durable without making the client wait on
 * Kafka: a report goes straight to the sink (Kafka, acks=all) when it answers
 * within `directTimeoutMs`; otherwise, or while the sink is failing, or while
 * older records still sit in the spool (order), the records are appended to
 * the fsynced local spool. A background loop delivers the spool to the sink,
 * oldest first, and deletes what was delivered; it also resumes after a
 * restart. A write whose outcome was never learned (it timed out, the broker
 * or this process died) may have landed all the same: records are spooled
 * with the log's position from before their first write, and before a
 * segment is delivered, the records already in the log after it are dropped
 * (ReplayGuard), once every write that timed out has settled.
 */
export class UsageIntake {
  private directAfter = 0;
  private delivering = false;
  private closed = false;
  private backoffMs = 200;
  private readonly timer: NodeJS.Timeout;
  /** Direct writes past their deadline that have not settled yet: they may still land. */
  private readonly unsettled = new Set<Promise<void>>();

  constructor(
    private readonly sink: RecordSink,
    private readonly guard: ReplayGuard,
    private readonly spool: Spool,
    private readonly options: UsageIntakeOptions,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => void this.deliver(), DELIVERY_CHECK_MS);
    this.timer.unref();
    void this.deliver();
  }

  /** Resolves once the records are durable (in the sink or the spool); rejects only when both fail. */
  async accept(records: UsageRecord[]): Promise<void> {
    const since = this.guard.position();
    if (this.spool.isEmpty && Date.now() >= this.directAfter) {
      const write = this.sink.write(records);
      try {
        await withDeadline(write, this.options.directTimeoutMs);
        return;
      } catch (error) {
        this.watch(write);
        if (Date.now() >= this.directAfter) this.logger.warn({ err: (error as Error).message }, "usage sink unavailable; spooling events locally");
        this.directAfter = Date.now() + this.options.retryDirectAfterMs;
      }
    }
    await this.spool.append(records, since);
    void this.deliver();
  }

  get spooledBytes(): number {
    return this.spool.bytes;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.spool.close();
  }

  private watch(write: Promise<void>): void {
    const settled = write.then(
      () => {},
      () => {},
    );
    this.unsettled.add(settled);
    void settled.then(() => this.unsettled.delete(settled));
  }

  private async deliver(): Promise<void> {
    if (this.delivering || this.spool.isEmpty) return;
    this.delivering = true;
    try {
      for (let segment = await this.spool.oldest(); segment; segment = await this.spool.oldest()) {
        while (this.unsettled.size > 0) await Promise.allSettled(this.unsettled);
        const logged = new Set(await this.guard.alreadyLogged(segment.records.map((r) => r.eventId), segment.since));
        const records = segment.records.filter((record) => !logged.has(record.eventId));
        for (let i = 0; i < records.length; i += DELIVERY_CHUNK) {
          await this.sink.write(records.slice(i, i + DELIVERY_CHUNK));
        }
        await segment.remove();
        this.logger.info({ records: records.length, alreadyLogged: logged.size, left: this.spool.bytes }, "spooled usage events delivered");
      }
      this.backoffMs = 200;
    } catch (error) {
      if (this.closed) return; // the sink closed under the delivery: the next start delivers the spool
      this.logger.warn({ err: (error as Error).message, retryInMs: this.backoffMs }, "spool delivery failed; will retry");
      await new Promise((resolve) => setTimeout(resolve, this.backoffMs).unref());
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    } finally {
      this.delivering = false;
    }
  }
}

