import type { Admin, Batch, Consumer, Kafka } from "kafkajs";
import type { Logger } from "../../core/logger.js";
import { parseUsageRecord } from "../usage-record.js";
import type { PartitionBatch, UsageStore } from "../usage/usage-store.js";

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
 * An aggregator that died without leaving the group (killed, or its broker
 * was down when it stopped) keeps its partitions until the broker misses its
 * heartbeats this long; with kafkajs' 30 s the counts of those partitions
 * stood still for as long (bench/README.md, "Aggregator session timeout").
 * Heartbeats go every second, between fetches that wait at most
 * FETCH_WAIT_MS, so only an event loop stalled for several seconds misses it.
 */
const SESSION_TIMEOUT_MS = 10_000;
const HEARTBEAT_INTERVAL_MS = 1000;

/**
 * The Kafka consumer group that turns usage records into exact counts in the
 * usage store. The store keeps, per partition, the last offset it applied,
 * written atomically with the counts: a batch redelivered after a crash or a
 * rebalance, or applied by two consumers at once, is counted once, and the
 * store remembers no event. The store is the truth about what was applied:
 * when it is behind the group's committed offsets (restored from an older
 * snapshot), the partition is read again from the store's offset. Lag
 * (records not yet applied) is measured every few seconds and handed to
 * `reportLag`.
 */
export class UsageAggregator {
  private readonly consumer: Consumer;
  private readonly admin: Admin;
  private readonly lagTimer: NodeJS.Timeout;
  private stopped = false;
  /** Whether the consumer is a member of its group, with partitions to apply (or none to have). */
  private joined = false;

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
      sessionTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: HEARTBEAT_INTERVAL_MS,
      retry: { retries: 5, initialRetryTime: 200 },
    });
    this.admin = kafka.admin();
    this.consumer.on(this.consumer.events.CRASH, (event) => {
      if (!event.payload.restart && !this.stopped) setTimeout(() => void this.run(), RESTART_DELAY_MS).unref();
    });
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => (this.joined = true));
    for (const left of [this.consumer.events.REBALANCING, this.consumer.events.CRASH, this.consumer.events.DISCONNECT, this.consumer.events.STOP]) {
      this.consumer.on(left, () => (this.joined = false));
    }
    // kafkajs restarts a crashed consumer after a delay, also when close() came in between
    this.consumer.on(this.consumer.events.CONNECT, () => {
      if (this.stopped) void this.consumer.disconnect().catch(() => {});
    });
    this.lagTimer = setInterval(() => void this.measureLag(), LAG_INTERVAL_MS);
    this.lagTimer.unref();
  }

  /** Starts consuming in the background; a broker that is down is retried until it answers. */
  start(): void {
    void this.run();
  }

  /** Ready: the usage store answers and the consumer has joined its group. */
  async health(): Promise<void> {
    await this.store.health();
    if (!this.joined) throw new Error("the usage consumer is not in its group (Kafka away, or joining)");
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.lagTimer);
    await this.disconnect();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.consumer.connect();
        await this.dropStaleFences();
        await this.consumer.subscribe({ topic: this.options.topic, fromBeginning: true });
        if (!this.stopped) await this.consumer.run({ eachBatch: ({ batch }) => this.apply(batch) });
        break;
      } catch (error) {
        this.logger.warn({ err: (error as Error).message }, "usage consumer cannot start yet; retrying");
        await this.consumer.disconnect().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS).unref());
      }
    }
    // closed while starting: what the start connected after close() disconnected would live on
    if (this.stopped) await this.disconnect();
  }

  private async disconnect(): Promise<void> {
    await Promise.allSettled([this.consumer.disconnect(), this.admin.disconnect()]);
  }

  private async apply(batch: Batch): Promise<void> {
    const firstOffset = batch.firstOffset();
    if (firstOffset === null) return;
    const { topic, partition } = batch;
    const partitionBatch: PartitionBatch = {
      topic,
      partition,
      firstOffset: Number(firstOffset),
      lastOffset: Number(batch.lastOffset()),
      records: batch.messages.flatMap((message) => {
        const record = parseUsageRecord(message.value?.toString("utf8") ?? "");
        return record ? [{ offset: Number(message.offset), record }] : [];
      }),
    };
    const result = await this.store.applyPartitionBatch(partitionBatch);
    if (!("behind" in result)) return;
    const from = result.behind + 1;
    const low = await this.lowWatermark(topic, partition);
    if (from >= low) {
      this.logger.warn({ topic, partition, from, committed: partitionBatch.firstOffset }, "the usage store is behind the consumer group (restored from an older state?); reading the partition again from its offset");
      this.consumer.seek({ topic, partition, offset: String(from) });
      return;
    }
    this.logger.error({ topic, partition, lost: `${from}-${low - 1}` }, "usage records deleted by retention before the usage store applied them; counting from the oldest kept");
    await this.store.applyPartitionBatch(partitionBatch, { acceptGap: true });
  }

  /** A topic deleted and created again starts its offsets over: the fences of the old one must go. */
  private async dropStaleFences(): Promise<void> {
    await this.admin.connect();
    const offsets = await this.admin.fetchTopicOffsets(this.options.topic).catch(() => []);
    const highs = new Map(offsets.map((p) => [p.partition, Number(p.high)]));
    const dropped = await this.store.dropStaleFences(this.options.topic, highs);
    if (dropped.length > 0) this.logger.warn({ topic: this.options.topic, partitions: dropped }, "usage topic started its offsets over (created again?); its old fences were dropped");
  }

  private async lowWatermark(topic: string, partition: number): Promise<number> {
    await this.admin.connect();
    const offsets = await this.admin.fetchTopicOffsets(topic);
    return Number(offsets.find((p) => p.partition === partition)?.low ?? 0);
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

