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
import { parseUsageRecords, serializeUsageRecords, type UsageRecord } from "../../services/telemetry/usage-record.js";
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

/** The records of one report: one metadata object and one receivedAt, so they share messages. */
const report = (licenseKey: string, events: number): UsageRecord[] => {
  const first = record(licenseKey, 0);
  return Array.from({ length: events }, (_, n) => ({ ...first, eventId: randomUUID(), documentId: `doc-${n}` }));
};
/** How many Kafka messages the log writes for these records. */
const messagesFor = (records: UsageRecord[]) => serializeUsageRecords(records).values.length;

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
      // distinct metadata: a message per record, 5,000 messages, more than one produce request holds
      const large = Array.from({ length: 5000 }, (_, n) => record("license-large", n));
      const small = Array.from({ length: 30 }, (_, n) => report(`license-${n % 4}`, 1 + (n % 3)));
      await log.write(large);
      assert.equal(await messagesIn(topic), large.length, "the large write resolved before all its records were in the topic");
      await Promise.all(small.map((records) => log.write(records)));
      const written = [...large, ...small.flat()];
      const messages = large.length + small.length;
      assert.equal(await messagesIn(topic), messages, "a small write is one message");

      const read = (await readMessages(client, topic, `reader-${topic}`, messages)).flatMap((value) => parseUsageRecords(value));
      assert.deepEqual(read.map((r) => r?.eventId).sort(), written.map((r) => r.eventId).sort());
      assert.deepEqual(read.find((r) => r?.eventId === large[4321].eventId), large[4321]);
    } finally {
      await log.close();
    }
  });

  test("records with the largest metadata allowed, a message each or a report's in shared messages: requests stay under the broker's 1 MiB batch limit", async () => {
    const topic = `usage-log-metadata-${Date.now()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const log = new KafkaUsageLog(kafkaOptions(kafka.brokers, "kafka-usage-log-test"), topic);
    try {
      // About 2 KB of metadata each (METADATA_LIMITS.maxBytes): 1,000 of them are 2 MB, in one partition.
      const metadata = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`field-${i}`, "x".repeat(120)]));
      const distinct = Array.from({ length: 1000 }, (_, n) => ({ ...record("license-metadata", n), metadata: { ...metadata } }));
      const shared = report("license-metadata", 1000).map((one) => ({ ...one, metadata }));
      await Promise.all([log.write(distinct), log.write(shared)]);
      assert.ok(messagesFor(shared) < 100, "a report's records share their messages");
      const messages = distinct.length + messagesFor(shared);
      assert.equal(await messagesIn(topic), messages);
      const read = (await readMessages(client, topic, `reader-${topic}`, messages)).flatMap((value) => parseUsageRecords(value));
      assert.equal(read.length, 2000);
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
      await waitFor(async () => (await messagesIn(topic)) === 2, { what: "the held write to land", timeoutMs: 60_000 });
      const later = [record("license-unanswered", 2), record("license-unanswered", 3)];
      for (const one of later) await log.write([one]);
      assert.equal(await messagesIn(topic), 4, "a later write was answered as a duplicate of the held one, and dropped");
      const read = (await readMessages(client, topic, `reader-${topic}`, 4)).flatMap((value) => parseUsageRecords(value).map((r) => r.documentId));
      assert.deepEqual(read.sort(), ["doc-0", "doc-1", "doc-2", "doc-3"]);
    } finally {
      kafka.resume();
      await log.close();
    }
  });
});
