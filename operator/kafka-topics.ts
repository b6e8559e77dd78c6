/**
 * The usage topic of a DocService, kept as its spec says through kafkajs
 * admin: created with its partitions, replication and retention; partitions
 * only ever increased (Kafka cannot shrink them); retention drift corrected.
 */
import kafkajs, { Kafka, logLevel } from "kafkajs";
import type { DocServiceSpec } from "./types.js";

type KafkaSpec = NonNullable<DocServiceSpec["kafka"]>;

export type TopicChange = "created" | "partitions-increased" | "config-corrected" | "unchanged";

const HOUR_MS = 3_600_000;
// kafkajs is CommonJS: its enums are not named ESM exports.
const { ConfigResourceTypes } = kafkajs;

function admin(kafka: KafkaSpec) {
  return new Kafka({ clientId: "docservice-operator", brokers: kafka.bootstrapServers, logLevel: logLevel.NOTHING, connectionTimeout: 3000, retry: { retries: 2 } }).admin();
}

async function withAdmin<T>(kafka: KafkaSpec, use: (client: ReturnType<typeof admin>) => Promise<T>): Promise<T> {
  const client = admin(kafka);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.disconnect();
  }
}

export function ensureTopic(kafka: KafkaSpec): Promise<TopicChange[]> {
  return withAdmin(kafka, async (client) => {
    const retention = String(kafka.retentionHours * HOUR_MS);
    const existing = await client.listTopics();
    if (!existing.includes(kafka.topic)) {
      await client.createTopics({
        waitForLeaders: true,
        topics: [{ topic: kafka.topic, numPartitions: kafka.partitions, replicationFactor: kafka.replicationFactor, configEntries: [{ name: "retention.ms", value: retention }] }],
      });
      return ["created"];
    }
    const changes: TopicChange[] = [];
    const [metadata] = (await client.fetchTopicMetadata({ topics: [kafka.topic] })).topics;
    if (metadata.partitions.length < kafka.partitions) {
      await client.createPartitions({ topicPartitions: [{ topic: kafka.topic, count: kafka.partitions }] });
      changes.push("partitions-increased");
    }
    const described = await client.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: kafka.topic, configNames: ["retention.ms"] }],
    });
    const current = described.resources[0]?.configEntries.find((entry) => entry.configName === "retention.ms")?.configValue;
    if (current !== retention) {
      await client.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: kafka.topic, configEntries: [{ name: "retention.ms", value: retention }] }] });
      changes.push("config-corrected");
    }
    return changes.length > 0 ? changes : ["unchanged"];
  });
}

export function deleteTopic(kafka: KafkaSpec): Promise<void> {
  return withAdmin(kafka, async (client) => {
    if ((await client.listTopics()).includes(kafka.topic)) await client.deleteTopics({ topics: [kafka.topic] });
  });
}
