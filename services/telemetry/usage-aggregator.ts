import type { Admin, Consumer, Kafka } from "kafkajs";
import type { Logger } from "../core/logger.js";
import { parseUsageRecord } from "./usage-record.js";
import type { UsageStore } from "./usage-store.js";

export interface UsageAggregatorOptions {
  topic: string;
  groupId: string;
  /** Called every few seconds with the records in Kafka not yet applied, summed over partitions. */
  reportLag(records: number): void;
}

const LAG_INTERVAL_MS = 5000;
/**
 * A fetch returns once this much is waiting, or after FETCH_WAIT_MS: under
 * load, a few large batches instead of one per produce request (each batch
 * costs a broker round trip, a Redis script and an offset commit); idle, the
 * counts trail the reports by at most FETCH_WAIT_MS.
 */
const FETCH_MIN_BYTES = 256 * 1024;
const FETCH_WAIT_MS = 250;
const RESTART_DELAY_MS = 2000;

/**
 * The Kafka consumer group that turns usage records into exact counts in the
 * usage store. A batch is committed only after the store applied it, so a
 * crash re-delivers it; the store applies each eventId once, so nothing is
 * counted twice. Lag (records not yet applied) is measured every few
 * seconds and handed to `reportLag`.
 */
export class UsageAggregator {
  private readonly consumer: Consumer;
  private readonly admin: Admin;
  private readonly lagTimer: NodeJS.Timeout;
  private stopped = false;

  constructor(
    kafka: Kafka,
    private readonly store: UsageStore,
    private readonly options: UsageAggregatorOptions,
    private readonly logger: Logger,
  ) {
    this.consumer = kafka.consumer({
      groupId: options.groupId,
      minBytes: FETCH_MIN_BYTES,
      maxWaitTimeInMs: FETCH_WAIT_MS,
      retry: { retries: 5, initialRetryTime: 200 },
    });
    this.admin = kafka.admin();
    this.consumer.on(this.consumer.events.CRASH, (event) => {
      if (!event.payload.restart && !this.stopped) setTimeout(() => void this.run(), RESTART_DELAY_MS).unref();
    });
    this.lagTimer = setInterval(() => void this.measureLag(), LAG_INTERVAL_MS);
    this.lagTimer.unref();
  }

  /** Starts consuming in the background; a broker that is down is retried until it answers. */
  start(): void {
    void this.run();
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.lagTimer);
    await Promise.allSettled([this.consumer.disconnect(), this.admin.disconnect()]);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.consumer.connect();
        await this.consumer.subscribe({ topic: this.options.topic, fromBeginning: true });
        await this.consumer.run({
          eachBatch: async ({ batch }) => {
            const records = batch.messages.flatMap((message) => parseUsageRecord(message.value?.toString("utf8") ?? "") ?? []);
            await this.store.record(records);
          },
        });
        return;
      } catch (error) {
        this.logger.warn({ err: (error as Error).message }, "usage consumer cannot start yet; retrying");
        await this.consumer.disconnect().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS).unref());
      }
    }
  }

  private async measureLag(): Promise<void> {
    try {
      await this.admin.connect();
      const [ends, committed] = await Promise.all([
        this.admin.fetchTopicOffsets(this.options.topic),
        this.admin.fetchOffsets({ groupId: this.options.groupId, topics: [this.options.topic] }),
      ]);
      const done = new Map(committed[0]?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? []);
      this.options.reportLag(ends.reduce((total, p) => total + Number(p.high) - Math.max(0, done.get(p.partition) ?? 0), 0));
    } catch {
      // the broker is down: keep the last value; the intake logs the outage
    }
  }
}

