import { Admin, Consumer, MessagesStreamFallbackModes, MessagesStreamModes, stringDeserializers, type BaseOptions, type Message, type MessagesStream } from "@platformatic/kafka";
import type { Logger } from "../../core/logger.js";
import { inSpan, isTracing, linkTo, SpanKind } from "../../core/tracing.js";
import { parseUsageRecords } from "../usage-record.js";
import type { PartitionBatch, UsageStore } from "../usage/usage-store.js";
import { topicOffsets } from "./topic-offsets.js";

/** What an aggregator reports of its progress (on /metrics). */
export interface AggregatorProgress {
  /** Every few seconds: records in Kafka not yet applied, as [partition, records] pairs. */
  lag(byPartition: Array<[number, number]>): void;
  /** Events a batch added to the counts. */
  applied(events: number): void;
}

export interface UsageAggregatorOptions {
  topic: string;
  groupId: string;
  progress: AggregatorProgress;
}

type UsageMessage = Message<string, string, string, string>;
type UsageStream = MessagesStream<string, string, string, string>;

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
 * heartbeats this long; the counts of those partitions stand still for as
 * long. Heartbeats go every second, so only an event loop stalled for several
 * seconds misses it.
 */
const SESSION_TIMEOUT_MS = 10_000;
const HEARTBEAT_INTERVAL_MS = 1000;
/**
 * How long a join waits for the group's other members to join again. They do
 * within a heartbeat, so this only bounds a join whose peer died: close()
 * waits for a join in progress, and a pod's grace period must cover it.
 */
const REBALANCE_TIMEOUT_MS = 15_000;

/**
 * The Kafka consumer group that turns usage records into exact counts in the
 * usage store. The store keeps, per partition, the last offset it applied,
 * written atomically with the counts: a batch redelivered after a crash or a
 * rebalance, or applied by two consumers at once, is counted once, and the
 * store remembers no event. Offsets are committed to the group only after the
 * store applied them. The store is the truth about what was applied: when it
 * is behind the group's committed offsets (restored from an older snapshot),
 * the group's offset of that partition is moved back to the store's and the
 * stream starts again from there. Lag (records not yet applied) is measured
 * every few seconds and reported with what each batch applied (`progress`).
 */
export class UsageAggregator {
  private readonly consumer: Consumer<string, string, string, string>;
  private readonly admin: Admin;
  private readonly lagTimer: NodeJS.Timeout;
  private stream: UsageStream | undefined;
  private stopped = false;
  /** The batches being applied, so close() waits for them and a restart does not start beside them. */
  private applying: Promise<void> = Promise.resolve();
  /**
   * The consuming loop. close() lets it end before it closes the consumer:
   * a consumer closed while it joins its group, or while its stream is still
   * closing, fails to leave the group and goes on heartbeating for good.
   */
  private running: Promise<void> = Promise.resolve();

  constructor(
    options: BaseOptions,
    private readonly store: UsageStore,
    private readonly settings: UsageAggregatorOptions,
    private readonly logger: Logger,
  ) {
    this.consumer = new Consumer({
      ...options,
      groupId: settings.groupId,
      deserializers: stringDeserializers,
      autocommit: false,
      minBytes: FETCH_MIN_BYTES,
      maxWaitTime: FETCH_WAIT_MS,
      sessionTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: HEARTBEAT_INTERVAL_MS,
      rebalanceTimeout: REBALANCE_TIMEOUT_MS,
    });
    this.admin = new Admin(options);
    this.lagTimer = setInterval(() => void this.measureLag(), LAG_INTERVAL_MS);
    this.lagTimer.unref();
  }

  /** Starts consuming in the background; a broker that is down is retried until it answers. */
  start(): void {
    this.running = this.run();
  }

  /** Ready: the usage store answers and the consumer is an active member of its group. */
  async health(): Promise<void> {
    await this.store.health();
    if (!this.consumer.isActive()) throw new Error("the usage consumer is not in its group (Kafka away, or joining)");
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.lagTimer);
    await this.stream?.close().catch(() => {});
    await this.running;
    await this.applying.catch(() => {});
    await Promise.allSettled([this.consumer.close(true), this.admin.close()]);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.dropStaleFences();
        if (this.stopped) return;
        const stream = await this.openStream();
        if (this.stopped) return void (await stream.close().catch(() => {}));
        this.stream = stream;
        await this.drain(stream);
      } catch (error) {
        if (this.stopped) return;
        this.logger.warn({ err: (error as Error).message }, "usage consumer stopped; starting again");
      }
      await this.stream?.close().catch(() => {});
      this.stream = undefined;
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS).unref());
    }
  }

  /**
   * The consumer's stream of the topic. It starts on its first tick, before
   * an awaited promise would hand it over, and can fail there (its first
   * offsets request refused): the error is caught here and read by drain()
   * from `stream.errored`, never thrown as an uncaught error.
   */
  private openStream(): Promise<UsageStream> {
    return new Promise((resolve, reject) => {
      this.consumer.consume({ topics: [this.settings.topic], mode: MessagesStreamModes.COMMITTED, fallbackMode: MessagesStreamFallbackModes.EARLIEST }, (error, stream) => {
        if (error || !stream) return reject(error ?? new Error("the consumer gave no stream"));
        stream.on("error", () => {});
        resolve(stream);
      });
    });
  }

  /**
   * Applies what the stream delivers, a turn's messages at a time (one or more
   * fetches' worth), until the stream ends or fails; resolves when a partition
   * must be read again from an earlier offset.
   */
  private drain(stream: UsageStream): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (stream.destroyed) return stream.errored ? reject(stream.errored) : resolve();
      let busy = false;
      const next = () => {
        if (busy) return;
        const messages: UsageMessage[] = [];
        for (let message = stream.read() as UsageMessage | null; message !== null; message = stream.read() as UsageMessage | null) messages.push(message);
        if (messages.length === 0) return;
        busy = true;
        this.applying = this.apply(messages).then(
          (rewound) => {
            busy = false;
            if (rewound) resolve();
            else next();
          },
          (error: unknown) => reject(error),
        );
      };
      stream.on("readable", next);
      stream.once("error", reject);
      stream.once("close", resolve);
      next();
    });
  }

  /** Applies the messages, partition by partition, then commits their offsets; true when a partition was moved back to the store's offset. */
  private async apply(messages: UsageMessage[]): Promise<boolean> {
    const byPartition = new Map<number, UsageMessage[]>();
    for (const message of messages) {
      const list = byPartition.get(message.partition);
      if (list) list.push(message);
      else byPartition.set(message.partition, [message]);
    }
    const committed = [];
    let rewound = false;
    for (const [partition, list] of byPartition) {
      const last = list.at(-1)!;
      const batch: PartitionBatch = {
        topic: this.settings.topic,
        partition,
        firstOffset: Number(list[0]!.offset),
        lastOffset: Number(last.offset),
        records: list.flatMap((message) => {
          const offset = Number(message.offset);
          return parseUsageRecords(message.value ?? "").map((record) => ({ offset, record }));
        }),
      };
      const result = await this.traced(list, partition, () => this.store.applyPartitionBatch(batch));
      if ("applied" in result) this.settings.progress.applied(result.applied);
      if ("behind" in result) {
        if (await this.rewind(batch, result.behind + 1)) {
          rewound = true;
          continue;
        }
      }
      committed.push({ topic: this.settings.topic, partition, offset: last.offset + 1n, leaderEpoch: last.leaderEpoch });
    }
    // a commit refused (the partition moved in a rebalance meanwhile) only means a redelivery, which the store's fence skips
    if (committed.length > 0) await this.consumer.commit({ offsets: committed }).catch(() => {});
    return rewound;
  }

  /**
   * The store is behind the batch: the partition is read again from `from`
   * (the group's offset moved there, the stream started again) while Kafka
   * still holds it, else what retention deleted is logged as lost and the
   * batch applied with the gap accepted. True when the partition was moved back.
   */
  private async rewind(batch: PartitionBatch, from: number): Promise<boolean> {
    const { topic, partition } = batch;
    const low = (await topicOffsets(this.admin, topic)).find((p) => p.partition === partition)?.low ?? 0;
    if (from >= low) {
      this.logger.warn({ topic, partition, from, committed: batch.firstOffset }, "the usage store is behind the consumer group (restored from an older state?); reading the partition again from its offset");
      await this.consumer.commit({ offsets: [{ topic, partition, offset: BigInt(from), leaderEpoch: -1 }] });
      return true;
    }
    this.logger.error({ topic, partition, lost: `${from}-${low - 1}` }, "usage records deleted by retention before the usage store applied them; counting from the oldest kept");
    const result = await this.store.applyPartitionBatch(batch, { acceptGap: true });
    if ("applied" in result) this.settings.progress.applied(result.applied);
    return false;
  }

  /** Applies a partition's batch, when traced in a span linked to the request of each of its records (their traceparent header). */
  private traced<T>(messages: UsageMessage[], partition: number, apply: () => Promise<T>): Promise<T> {
    if (!isTracing()) return apply();
    const links = messages.flatMap((message) => linkTo(message.headers.get("traceparent")));
    const attributes = { "messaging.system": "kafka", "messaging.destination.name": this.settings.topic, "messaging.destination.partition.id": String(partition), "messaging.batch.message_count": messages.length };
    return inSpan("apply usage records", { kind: SpanKind.CONSUMER, links, attributes }, apply);
  }

  /** A topic deleted and created again starts its offsets over: the fences of the old one must go. */
  private async dropStaleFences(): Promise<void> {
    const offsets = await topicOffsets(this.admin, this.settings.topic).catch(() => []);
    const highs = new Map(offsets.map((p) => [p.partition, p.high]));
    const dropped = await this.store.dropStaleFences(this.settings.topic, highs);
    if (dropped.length > 0) this.logger.warn({ topic: this.settings.topic, partitions: dropped }, "usage topic started its offsets over (created again?); its old fences were dropped");
  }

  private async measureLag(): Promise<void> {
    try {
      const [ends, [group]] = await Promise.all([
        topicOffsets(this.admin, this.settings.topic),
        this.admin.listConsumerGroupOffsets({ groups: [this.settings.groupId] }),
      ]);
      const topic = group?.topics.find((t) => t.name === this.settings.topic);
      const done = new Map(topic?.partitions.map((p) => [p.partitionIndex, Number(p.committedOffset)]) ?? []);
      this.settings.progress.lag(ends.map((p) => [p.partition, p.high - Math.max(0, done.get(p.partition) ?? 0)]));
    } catch {
      // the broker is down: keep the last value; the intake logs the outage
    }
  }
}
