// KafkaUsageLog against a real Kafka 3.9 (KRaft): a write resolves only once
// every one of its records is in the topic, however many produce requests it
// was cut into, and no record is written twice; a write whose answer never
// came does not make later writes fail or vanish.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { kafkaOptions } from "../../services/telemetry/kafka/kafka-options.js";
import { KafkaUsageLog } from "../../services/telemetry/kafka/kafka-usage-log.js";
import { parseUsageRecord, type UsageRecord } from "../../services/telemetry/usage-record.js";
import { readMessages, startKafka, type KafkaBroker } from "../support/kafka.js";
import { waitFor } from "../support/wait.js";

const record = (licenseKey: string, n: number): UsageRecord => ({
  eventId: randomUUID(),
  licenseKey,
  documentId: `doc-${n}`,
  documentCreatedAt: null,
  openedAt: new Date().toISOString(),
  receivedAt: new Date().toISOString(),
  libraryVersion: "1.0.0",
  hostname: "example.test",
  metadata: { n: String(n) },
});

describe("KafkaUsageLog", () => {
  let kafka: KafkaBroker;
  let client: Kafka;
  let admin: Admin;
  before(async () => {
    kafka = await startKafka();
    // kafkajs here only administers and reads the topics the log under test writes to
    client = new Kafka({ clientId: "kafka-usage-log-test", brokers: kafka.brokers, logLevel: logLevel.NOTHING });
    admin = client.admin();
    await admin.connect();
  });
  after(async () => {
    await admin?.disconnect();
    await kafka?.stop();
  });

  const messagesIn = async (topic: string) => (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);

  test("a write larger than one produce request, with small writes beside it: all durable on resolve, each record once", async () => {
    const topic = `usage-log-${Date.now()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    const log = new KafkaUsageLog(kafkaOptions(kafka.brokers, "kafka-usage-log-test"), topic);
    try {
      const large = Array.from({ length: 5000 }, (_, n) => record("license-large", n));
      const small = Array.from({ length: 30 }, (_, n) => [record(`license-${n % 4}`, n)]);
      await log.write(large);
      assert.equal(await messagesIn(topic), large.length, "the large write resolved before all its records were in the topic");
      await Promise.all(small.map((records) => log.write(records)));
      const written = [...large, ...small.flat()];
      assert.equal(await messagesIn(topic), written.length);

      const read = (await readMessages(client, topic, `reader-${topic}`, written.length)).map((value) => parseUsageRecord(value));
      assert.deepEqual(read.map((r) => r?.eventId).sort(), written.map((r) => r.eventId).sort());
      assert.deepEqual(read.find((r) => r?.eventId === large[4321].eventId), large[4321]);
    } finally {
      await log.close();
    }
  });

  test("records with the largest metadata allowed: requests stay under the broker's 1 MiB batch limit", async () => {
    const topic = `usage-log-metadata-${Date.now()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const log = new KafkaUsageLog(kafkaOptions(kafka.brokers, "kafka-usage-log-test"), topic);
    try {
      // About 2 KB of metadata each (METADATA_LIMITS.maxBytes): 1,000 of them are 2 MB, in one partition.
      const metadata = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`field-${i}`, "x".repeat(120)]));
      const records = Array.from({ length: 1000 }, (_, n) => ({ ...record("license-metadata", n), metadata }));
      await log.write(records);
      assert.equal(await messagesIn(topic), records.length);
    } finally {
      await log.close();
    }
  });

  test("a write that reached the broker but timed out (the broker paused): later writes land, none is taken for a retry of it", async () => {
    const topic = `usage-log-unanswered-${Date.now()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    // A short request timeout, so the paused broker fails the write in about a second.
    const log = new KafkaUsageLog({ ...kafkaOptions(kafka.brokers, "kafka-usage-log-impatient"), requestTimeout: 800 }, topic);
    try {
      await log.write([record("license-unanswered", 0)]);
      kafka.pause();
      const unanswered = log.write([record("license-unanswered", 1)]);
      await assert.rejects(unanswered);
      kafka.resume();
      // the broker now reads the requests it held and appends the record: an idempotent
      // producer that carried on would number its next record as that one's retry
      await waitFor(async () => (await messagesIn(topic)) === 2, { what: "the held write to land", timeoutMs: 20_000 });
      const later = [record("license-unanswered", 2), record("license-unanswered", 3)];
      for (const one of later) await log.write([one]);
      assert.equal(await messagesIn(topic), 4, "a later write was answered as a duplicate of the held one, and dropped");
      const read = (await readMessages(client, topic, `reader-${topic}`, 4)).map((value) => parseUsageRecord(value)?.documentId);
      assert.deepEqual(read.sort(), ["doc-0", "doc-1", "doc-2", "doc-3"]);
    } finally {
      kafka.resume();
      await log.close();
    }
  });
});
