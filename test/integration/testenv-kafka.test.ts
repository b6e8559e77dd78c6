// Self-test of the telemetry test environment: real Kafka 3.9 (KRaft) and
// Debian's Chromium through playwright-core (scripts/testenv/kafka.sh, browser.sh).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Kafka, logLevel, Partitioners, type Producer } from "kafkajs";
import { launchBrowser } from "../support/browser.js";
import { readMessages, startKafka, type KafkaBroker } from "../support/kafka.js";

describe("kafka", () => {
  let kafka: KafkaBroker;
  let client: Kafka;
  let startupMs: number;
  before(async () => {
    const started = Date.now();
    kafka = await startKafka();
    startupMs = Date.now() - started;
    // NOTHING: kafkajs logs every retried error response (the topic's first metadata
    // request, the first group's coordinator lookup) at ERROR level.
    client = new Kafka({ clientId: "testenv-kafka", brokers: kafka.brokers, logLevel: logLevel.NOTHING });
  });
  after(async () => {
    await kafka?.stop();
  });

  test("listens on loopback at the port it reports", (t) => {
    t.diagnostic(`kafka started in ${startupMs} ms`);
    assert.deepEqual(kafka.brokers, [`127.0.0.1:${kafka.port}`]);
  });

  test("an idempotent acks=all producer writes, a consumer group reads back; data survives stop/start", async (t) => {
    const topic = `testenv-${Date.now()}`;
    const before = Array.from({ length: 20 }, (_, i) => ({ key: `license-${i % 3}`, value: `event-${i}` }));
    const afterRestart = [{ key: "license-0", value: "after-restart" }];

    await withProducer(client, (producer) => producer.send({ topic, acks: -1, messages: before }));
    assert.deepEqual(await readMessages(client, topic, `group-a-${topic}`, before.length), before.map((m) => m.value));

    const stopped = Date.now();
    await kafka.stop();
    await kafka.start();
    t.diagnostic(`kafka stopped and restarted in ${Date.now() - stopped} ms`);

    // A new group sees what was written before the restart, and what is written after.
    await withProducer(client, (producer) => producer.send({ topic, acks: -1, messages: afterRestart }));
    const all = [...before, ...afterRestart].map((m) => m.value);
    assert.deepEqual(await readMessages(client, topic, `group-b-${topic}`, all.length), all);
    // The first group's committed offsets survived too: it gets only the new message.
    assert.deepEqual(await readMessages(client, topic, `group-a-${topic}`, 1), ["after-restart"]);
  });
});

async function withProducer(client: Kafka, use: (producer: Producer) => Promise<unknown>): Promise<void> {
  const producer = client.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  try {
    await use(producer);
  } finally {
    await producer.disconnect();
  }
}

describe("chromium", () => {
  test("playwright-core drives Debian's Chromium: a data: page, JavaScript in it", async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto("data:text/html,<title>testenv</title><p id=x>41</p>");
      assert.equal(await page.title(), "testenv");
      assert.equal(await page.evaluate("Number(document.getElementById('x').textContent) + 1"), 42);
      assert.match(browser.version(), /^\d+\./);
    } finally {
      await browser.close();
    }
  });
});
