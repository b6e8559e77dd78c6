// Exactly-once usage counts without remembering events, against a real
// Kafka 3.9 and a real Redis: the aggregator's offset fence (redelivery after
// the store applied a batch, a rebalance between two aggregators, a store
// restored to an older state, a topic created again) and the read-back that
// keeps a write of unknown outcome from being replayed twice.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Admin as KafkaAdmin, type BaseOptions } from "@platformatic/kafka";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { createLogger } from "../../services/core/logger.js";
import { connectRedis, type RedisClient } from "../../services/core/redis-client.js";
import { kafkaOptions } from "../../services/telemetry/kafka/kafka-options.js";
import { KafkaLogReader } from "../../services/telemetry/kafka/kafka-log-reader.js";
import { KafkaUsageLog } from "../../services/telemetry/kafka/kafka-usage-log.js";
import { RedisUsageStore } from "../../services/telemetry/usage/redis-usage-store.js";
import { UsageAggregator } from "../../services/telemetry/kafka/usage-aggregator.js";
import type { UsageRecord } from "../../services/telemetry/usage-record.js";
import type { UsageStore } from "../../services/telemetry/usage/usage-store.js";
import { startKafka, type KafkaBroker } from "../support/kafka.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

const DAY = "2026-11-25";
const logger = createLogger("silent");

function record(licenseKey: string, n: number): UsageRecord {
  const at = `${DAY}T10:00:00.000Z`;
  return { eventId: randomUUID(), licenseKey, documentId: `doc-${n % 40}`, documentCreatedAt: null, openedAt: at, receivedAt: at, libraryVersion: "1.0.0", hostname: "example.test", metadata: {} };
}

describe("usage counted exactly once through Kafka, by offsets", () => {
  let kafka: KafkaBroker;
  let redisServer: RedisServer;
  let options: BaseOptions;
  /** kafkajs only administers the test's topics and groups; what is under test is the platform's own clients. */
  let client: Kafka;
  let readerAdmin: KafkaAdmin;
  let admin: Admin;
  let redis: RedisClient;
  let store: RedisUsageStore;
  const closing: Array<() => Promise<void>> = [];

  before(async () => {
    [kafka, redisServer] = await Promise.all([startKafka(), startRedis()]);
    options = kafkaOptions(kafka.brokers, "usage-exactly-once-test");
    client = new Kafka({ clientId: "usage-exactly-once-admin", brokers: kafka.brokers, logLevel: logLevel.NOTHING });
    readerAdmin = new KafkaAdmin(options);
    admin = client.admin();
    await admin.connect();
    redis = connectRedis(redisServer.url, logger);
    await waitFor(async () => redis.isReady, { what: "redis" });
    store = new RedisUsageStore(redis);
  });

  after(async () => {
    for (const close of closing.reverse()) await close().catch(() => {});
    await admin?.disconnect();
    await readerAdmin?.close();
    await store?.close();
    await Promise.allSettled([kafka?.stop(), redisServer?.stop()]);
  });

  async function topicWith(partitions: number): Promise<{ topic: string; log: KafkaUsageLog }> {
    const topic = `usage-${randomUUID().slice(0, 8)}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
    const log = new KafkaUsageLog(options, topic);
    closing.push(() => log.close());
    return { topic, log };
  }

  function aggregate(topic: string, groupId: string, usageStore: UsageStore = store): UsageAggregator {
    const aggregator = new UsageAggregator(options, usageStore, { topic, groupId, progress: { lag() {}, applied() {} } }, logger);
    aggregator.start();
    closing.push(() => aggregator.close());
    return aggregator;
  }

  const counted = async (licenseKey: string) => (await store.usage(licenseKey, DAY, DAY)).opens;
  const countedExactly = async (opens: number, ...licenseKeys: string[]) => {
    for (const key of licenseKeys) await waitFor(async () => (await counted(key)) >= opens, { what: `${opens} opens of ${key}`, timeoutMs: 60_000, intervalMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a second count would show by now
    for (const key of licenseKeys) assert.equal(await counted(key), opens);
  };

  test("a batch applied to the store but not committed (the aggregator failed between the two) is redelivered and counted once", async () => {
    const { topic, log } = await topicWith(1);
    const key = `lk-${randomUUID()}`;
    await log.write(Array.from({ length: 500 }, (_, n) => record(key, n)));
    let failures = 0;
    // applies, then fails as if the process died before the offset was committed
    const failingAfterApply: UsageStore = Object.assign(Object.create(store) as UsageStore, {
      applyPartitionBatch: async (...args: Parameters<UsageStore["applyPartitionBatch"]>) => {
        const result = await store.applyPartitionBatch(...args);
        if (failures++ < 3) throw new Error("died after the store applied the batch");
        return result;
      },
    });
    aggregate(topic, `group-${topic}`, failingAfterApply);
    await waitFor(async () => failures > 3, { what: "the batch to be redelivered after each failure", timeoutMs: 90_000 });
    await countedExactly(500, key);
    assert.equal(await redis.hGet(`ds:usage:offsets:${topic}`, "0"), "499");
  });

  test("two aggregators in one group, one of them stopped mid-stream (a rebalance): every record counted once", async () => {
    const { topic, log } = await topicWith(4);
    const keys = Array.from({ length: 8 }, () => `lk-${randomUUID()}`);
    const group = `group-${topic}`;
    const first = aggregate(topic, group);
    aggregate(topic, group);
    let written = 0;
    const writeSome = async (rounds: number) => {
      for (let round = 0; round < rounds; round++) {
        await log.write(keys.flatMap((key) => Array.from({ length: 25 }, (_, n) => record(key, n))));
        written += 25;
      }
    };
    await writeSome(10);
    await first.close(); // its partitions move to the other aggregator, maybe mid-batch
    await writeSome(10);
    await countedExactly(written, ...keys);
  });

  test("aggregators closed at every moment of joining their group (a scale-down during a rebalance) leave it, without an uncaught error", async () => {
    const { topic, log } = await topicWith(2);
    const group = `group-${topic}`;
    await log.write([record(`lk-${randomUUID()}`, 0)]);
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    try {
      aggregate(topic, group); // a member that stays, so each newcomer's join is a rebalance
      for (let delayMs = 0; delayMs <= 600; delayMs += 25) {
        const aggregator = new UsageAggregator(options, store, { topic, groupId: group, progress: { lag() {}, applied() {} } }, logger);
        aggregator.start();
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        await aggregator.close();
      }
      await new Promise((resolve) => setTimeout(resolve, 500)); // an error a closed stream emits late would show by now
    } finally {
      process.off("uncaughtException", onUncaught);
    }
    assert.deepEqual(uncaught, []);
    // one that failed to leave would still heartbeat as a member, and keep its process alive
    const members = (await readerAdmin.describeGroups({ groups: [group] })).get(group)?.members;
    assert.equal(members?.size, 1);
  });

  test("the store restored to an older state (behind the group's commits): the partition is read again from the store's offset", async () => {
    const { topic, log } = await topicWith(1);
    const key = `lk-${randomUUID()}`;
    const aggregator = aggregate(topic, `group-${topic}`);
    await log.write(Array.from({ length: 100 }, (_, n) => record(key, n)));
    await countedExactly(100, key);
    // the state after 100 records, as a snapshot would hold it
    const stateKeys = [...(await redis.keys(`ds:usage:key:${key}:*`)), `ds:usage:offsets:${topic}`];
    for (const name of stateKeys) await redis.copy(name, `snapshot:${name}`);
    await log.write(Array.from({ length: 150 }, (_, n) => record(key, 100 + n)));
    await countedExactly(250, key);
    await aggregator.close();
    for (const name of stateKeys) await redis.copy(`snapshot:${name}`, name, { REPLACE: true });
    assert.equal(await counted(key), 100);

    aggregate(topic, `group-${topic}`); // its group committed 250; the store says 100
    await log.write([record(key, 999)]);
    await countedExactly(251, key);
  });

  test("a topic deleted and created again: its old fences are dropped at start, and its records count from offset 0", async () => {
    const { topic, log } = await topicWith(1);
    const key = `lk-${randomUUID()}`;
    const group = `group-${topic}`;
    const aggregator = aggregate(topic, group);
    await log.write(Array.from({ length: 50 }, (_, n) => record(key, n)));
    await countedExactly(50, key);
    await aggregator.close();
    await admin.deleteTopics({ topics: [topic] }); // the group keeps its commits (offset 50): past the new topic's end
    await waitFor(async () => !(await admin.listTopics()).includes(topic), { what: "the topic to go" });
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await log.write(Array.from({ length: 10 }, (_, n) => record(key, n)));
    aggregate(topic, group);
    await countedExactly(60, key);
  });

  test("read-back: of the records a write of unknown outcome held, those in the log after the position taken before it are found, others not", async () => {
    const { topic, log } = await topicWith(3);
    const keys = ["a", "b", "c", "d"].map((k) => `lk-${k}-${randomUUID()}`);
    await log.write(keys.map((key) => record(key, 0)));
    const before = log.position();
    const landed = keys.flatMap((key) => Array.from({ length: 30 }, (_, n) => record(key, n)));
    const lost = keys.map((key) => record(key, 1));
    await log.write(landed);
    const reader = new KafkaLogReader(options, readerAdmin, topic, `replay-${topic}`);
    const ids = [...landed, ...lost].map((r) => r.eventId);
    assert.deepEqual(new Set(await reader.alreadyLogged(ids, before)), new Set(landed.map((r) => r.eventId)));
    // a later segment, its records written since: the window read before is extended, not read again
    const later = keys.map((key) => record(key, 2));
    await log.write(later);
    assert.deepEqual(new Set(await reader.alreadyLogged([...later, ...lost].map((r) => r.eventId), before)), new Set(later.map((r) => r.eventId)));
    // nothing known (a spool of an older version): the whole log is read
    const fresh = new KafkaLogReader(options, readerAdmin, topic, `replay-${topic}`);
    assert.equal((await fresh.alreadyLogged(ids, {})).length, landed.length);
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
    assert.ok(!groups.some((g) => g.startsWith(`replay-${topic}`)), "the throwaway groups are deleted");
  });
});
