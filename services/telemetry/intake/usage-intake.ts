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
  /** At close, how long the spool may take to reach the sink before it is left for the next start. */
  handOverMs: number;
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
  /** The delivery under way, if any: one at a time. */
  private delivery: Promise<void> | undefined;
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

  /**
   * Hands the spool to the sink before closing: a pod that is scaled down or
   * replaced takes its data directory with it, and the events it answered 202
   * for must not go too. It tries for up to `handOverMs`, past a delivery under
   * way and past failures (the sink may come back meanwhile); what is left
   * stays on disk for the next start with the same data directory, and is logged.
   */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const deadline = Date.now() + this.options.handOverMs;
    const handOver = async () => {
      while (!this.spool.isEmpty && Date.now() < deadline) await (this.delivery ?? this.deliver(deadline - Date.now()));
    };
    // a write that outlives the deadline may still land: its segment stays, and the next start's read-back skips what it wrote
    await withDeadline(handOver(), this.options.handOverMs).catch(() => {});
    this.closed = true;
    if (this.spool.isEmpty) this.logger.info("usage spool empty at close");
    else this.logger.warn({ spooledBytes: this.spool.bytes, handOverMs: this.options.handOverMs }, "usage spool not delivered at close; the next start with this data directory delivers it");
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

  /** Starts delivering the spool (unless a delivery is under way or it is empty); a failure waits out its backoff, at most `maxBackoffMs`. */
  private deliver(maxBackoffMs = MAX_BACKOFF_MS): Promise<void> {
    if (this.delivery || this.spool.isEmpty) return this.delivery ?? Promise.resolve();
    this.delivery = this.deliverSegments(maxBackoffMs).finally(() => (this.delivery = undefined));
    return this.delivery;
  }

  private async deliverSegments(maxBackoffMs: number): Promise<void> {
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
      const waitMs = Math.max(0, Math.min(this.backoffMs, maxBackoffMs));
      this.logger.warn({ err: (error as Error).message, retryInMs: waitMs }, "spool delivery failed; will retry");
      await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    }
  }
}

