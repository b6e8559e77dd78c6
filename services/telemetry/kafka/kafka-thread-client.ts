import type { Worker } from "node:worker_threads";
import type { Logger } from "../../core/logger.js";
import { startTypeScriptWorker } from "../../core/typescript-worker.js";
import type { FromKafkaThread, KafkaThreadSetup, ToKafkaThread } from "./kafka-thread-protocol.js";
import type { LogPosition } from "../intake/log-position.js";
import type { RecordSink } from "../intake/record-sink.js";
import type { ReplayGuard } from "../intake/replay-guard.js";
import { serializeUsageRecords, type UsageRecord } from "../usage-record.js";
import { TurnBatcher } from "./turn-batcher.js";
import type { AggregatorProgress } from "./usage-aggregator.js";
import { isTracing, sampledTraceparent, tracedServiceName } from "../../core/tracing.js";

/** A write waiting to travel to the thread with others, and how to answer its caller. */
interface PendingWrite {
  records: UsageRecord[];
  /** The writer's traceparent, when traced. */
  trace?: string;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Writes made in one turn of the event loop travel to the thread together,
 * but a busy turn hands them over by 500 records or after 2 ms, so the thread
 * encodes the first while the turn still reads the rest of the reports (else
 * the two threads take turns, each idle while the other works). Handing over
 * much more often costs more in CPU per handover than the overlap gains. The
 * figures: bench/README.md, "Kafka hand-over".
 */
const HANDOVER = { maxWeight: 500, maxWaitMs: 2 };
/**
 * The producer thread's young generation, capped. Left to V8 it grows under
 * load past the old generation's headroom above its live size, and V8 then
 * starts the next mark-compact as soon as the last one ended (see
 * heap-growth.ts). The aggregator keeps V8's sizing: its batches outlive a
 * small young generation, and would be promoted and marked over and over
 * (bench/README.md, "Heap growing factor").
 */
const PRODUCER_LIMITS = { maxYoungGenerationSizeMb: 16 };
const RESTART_DELAY_MS = 1000;
const CLOSE_TIMEOUT_MS = 15_000;

/**
 * A worker thread (`kafka-thread.ts`) running the Kafka producer or, in
 * one-process mode, the usage aggregator. Writes to the producer made in the
 * same turn of the event loop travel to the thread in a few messages
 * (HANDOVER) and resolve once Kafka acknowledged them. If the thread dies, its
 * unanswered writes fail (the intake spools them) and a new thread starts. The log's position comes
 * back with every write, so position() needs no round trip to the thread.
 */
export class KafkaThread implements RecordSink, ReplayGuard {
  private thread: Worker;
  private readonly queued = new TurnBatcher<PendingWrite>(HANDOVER, (write) => write.records.length, (batch) => this.send(batch));
  private readonly sent = new Map<number, PendingWrite[]>();
  private nextBatchId = 1;
  private known: LogPosition = {};
  private readonly lookups = new Map<number, { resolve(eventIds: string[]): void; reject(error: unknown): void }>();
  private nextLookupId = 1;
  private closing = false;
  /** False between a thread's exit and its replacement: writes then fail at once. */
  private alive = false;

  constructor(
    private readonly setup: KafkaThreadSetup,
    private readonly logger: Logger,
    private readonly progress: AggregatorProgress | undefined,
  ) {
    this.thread = this.spawn();
  }

  write(records: UsageRecord[]): Promise<void> {
    const trace = isTracing() ? sampledTraceparent() : undefined;
    return new Promise((resolve, reject) => {
      this.queued.add({ records, trace, resolve, reject });
    });
  }

  position(): LogPosition {
    return this.known;
  }

  alreadyLogged(eventIds: string[], since: LogPosition): Promise<string[]> {
    if (!this.alive) return Promise.reject(new Error("the kafka thread is restarting"));
    const requestId = this.nextLookupId++;
    return new Promise((resolve, reject) => {
      this.lookups.set(requestId, { resolve, reject });
      this.thread.postMessage({ type: "alreadyLogged", requestId, eventIds, since } satisfies ToKafkaThread);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    const thread = this.thread;
    const exited = new Promise<void>((resolve) => thread.once("exit", () => resolve()));
    thread.postMessage({ type: "close" } satisfies ToKafkaThread);
    const timer = setTimeout(() => void thread.terminate(), CLOSE_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  private send(batch: PendingWrite[]): void {
    if (!this.alive) {
      const error = new Error("the kafka thread is restarting");
      return batch.forEach((entry) => entry.reject(error));
    }
    const batchId = this.nextBatchId++;
    this.sent.set(batchId, batch);
    const keys: string[] = [];
    const values: string[] = [];
    // most writes are not sampled: their records carry no traceparent, and a batch without any sends no array
    const traces: string[] | undefined = batch.some((write) => write.trace) ? [] : undefined;
    for (const { records, trace } of batch) {
      serializeUsageRecords(records, keys, values);
      while (traces && traces.length < values.length) traces.push(trace ?? "");
    }
    this.thread.postMessage({ type: "write", batchId, keys, values, traces } satisfies ToKafkaThread);
  }

  private spawn(): Worker {
    const thread = startTypeScriptWorker("./kafka-thread.js", import.meta.url, { ...this.setup, tracedAs: tracedServiceName() }, this.setup.role === "producer" ? PRODUCER_LIMITS : undefined);
    this.alive = true;
    thread.on("message", (message: FromKafkaThread) => this.onMessage(message));
    thread.on("error", (error) => this.logger.error({ err: error }, "kafka thread failed"));
    thread.on("exit", (code) => this.onExit(thread, code));
    return thread;
  }

  private onMessage(message: FromKafkaThread): void {
    if (message.type === "lag") return this.progress?.lag(message.byPartition);
    if (message.type === "applied") return this.progress?.applied(message.events);
    if (message.type === "position") {
      this.known = message.position;
      return;
    }
    if (message.type === "alreadyLogged") {
      const lookup = this.lookups.get(message.requestId);
      this.lookups.delete(message.requestId);
      if (message.eventIds) lookup?.resolve(message.eventIds);
      else lookup?.reject(new Error(message.error));
      return;
    }
    if (message.type !== "written") return;
    if (message.position) this.known = message.position;
    const batch = this.sent.get(message.batchId);
    this.sent.delete(message.batchId);
    const error = message.error === undefined ? undefined : new Error(message.error);
    for (const entry of batch ?? []) {
      if (error) entry.reject(error);
      else entry.resolve();
    }
  }

  private onExit(thread: Worker, code: number): void {
    if (thread !== this.thread) return;
    this.alive = false;
    const error = new Error(`the kafka thread exited (code ${code})`);
    for (const batch of this.sent.values()) batch.forEach((entry) => entry.reject(error));
    this.sent.clear();
    for (const lookup of this.lookups.values()) lookup.reject(error);
    this.lookups.clear();
    if (this.closing) return;
    this.logger.error({ code }, "kafka thread exited; starting a new one");
    setTimeout(() => {
      if (!this.closing) this.thread = this.spawn();
    }, RESTART_DELAY_MS).unref();
  }
}
