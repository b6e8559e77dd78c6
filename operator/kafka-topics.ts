/**
 * The usage topic of a DocService, kept as its spec says through the Kafka
 * admin API: created with its partitions, replication and retention;
 * partitions only ever increased (Kafka cannot shrink them); retention drift
 * corrected.
 */
import { Admin, ConfigResourceTypes } from "@platformatic/kafka";
import type { DocServiceSpec } from "./types.js";

type KafkaSpec = NonNullable<DocServiceSpec["kafka"]>;

export type TopicChange = "created" | "partitions-increased" | "config-corrected" | "unchanged";

const HOUR_MS = 3_600_000;

async function withAdmin<T>(kafka: KafkaSpec, use: (client: Admin) => Promise<T>): Promise<T> {
  const client = new Admin({ clientId: "docservice-operator", bootstrapBrokers: kafka.bootstrapServers, connectTimeout: 3000, retries: 2, retryDelay: 200 });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

export function ensureTopic(kafka: KafkaSpec): Promise<TopicChange[]> {
  return withAdmin(kafka, async (client) => {
    const retention = String(kafka.retentionHours * HOUR_MS);
    const existing = await client.listTopics();
    if (!existing.includes(kafka.topic)) {
      await client.createTopics({ topics: [kafka.topic], partitions: kafka.partitions, replicas: kafka.replicationFactor, configs: [{ name: "retention.ms", value: retention }] });
      return ["created"];
    }
    const changes: TopicChange[] = [];
    const metadata = await client.metadata({ topics: [kafka.topic], forceUpdate: true });
    if ((metadata.topics.get(kafka.topic)?.partitionsCount ?? 0) < kafka.partitions) {
      await client.createPartitions({ topics: [{ name: kafka.topic, count: kafka.partitions }] });
      changes.push("partitions-increased");
    }
    const [described] = await client.describeConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: kafka.topic, configurationKeys: ["retention.ms"] }] });
    const current = described?.configs.find((entry) => entry.name === "retention.ms")?.value;
    if (current !== retention) {
      await client.alterConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: kafka.topic, configs: [{ name: "retention.ms", value: retention }] }] });
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
