import { withDeadline } from "../core/deadline.js";
import type { Logger } from "../core/logger.js";
import type { RecordSink } from "./record-sink.js";
import type { Spool } from "./spool.js";
import type { UsageRecord } from "./usage-record.js";

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
 * restart. A write that timed out may still land in Kafka and also be
 * delivered from the spool: aggregation applies each eventId once.
 */
export class UsageIntake {
  private directAfter = 0;
  private delivering = false;
  private backoffMs = 200;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly sink: RecordSink,
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
    if (this.spool.isEmpty && Date.now() >= this.directAfter) {
      try {
        await withDeadline(this.sink.write(records), this.options.directTimeoutMs);
        return;
      } catch (error) {
        if (Date.now() >= this.directAfter) this.logger.warn({ err: (error as Error).message }, "usage sink unavailable; spooling events locally");
        this.directAfter = Date.now() + this.options.retryDirectAfterMs;
      }
    }
    await this.spool.append(records);
    void this.deliver();
  }

  get spooledBytes(): number {
    return this.spool.bytes;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.spool.close();
  }

  private async deliver(): Promise<void> {
    if (this.delivering || this.spool.isEmpty) return;
    this.delivering = true;
    try {
      for (let segment = await this.spool.oldest(); segment; segment = await this.spool.oldest()) {
        for (let i = 0; i < segment.records.length; i += DELIVERY_CHUNK) {
          await this.sink.write(segment.records.slice(i, i + DELIVERY_CHUNK));
        }
        await segment.remove();
        this.logger.info({ records: segment.records.length, left: this.spool.bytes }, "spooled usage events delivered");
      }
      this.backoffMs = 200;
    } catch (error) {
      this.logger.warn({ err: (error as Error).message, retryInMs: this.backoffMs }, "spool delivery failed; will retry");
      await new Promise((resolve) => setTimeout(resolve, this.backoffMs).unref());
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    } finally {
      this.delivering = false;
    }
  }
}

