import { ListOffsetTimestamps, type Admin } from "@platformatic/kafka";

/** Per partition of a topic: its low watermark (the oldest offset kept) and its high watermark (the next offset written). */
export interface PartitionOffsets {
  partition: number;
  low: number;
  high: number;
}

/** The watermarks of every partition of `topic`. */
export async function topicOffsets(admin: Admin, topic: string): Promise<PartitionOffsets[]> {
  const metadata = await admin.metadata({ topics: [topic], forceUpdate: true });
  const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
  const partitions = Array.from({ length: count }, (_, partition) => partition);
  const at = async (timestamp: bigint) => {
    const [listed] = await admin.listOffsets({ topics: [{ name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp })) }] });
    return new Map((listed?.partitions ?? []).map((p) => [p.partitionIndex, Number(p.offset)]));
  };
  const [lows, highs] = await Promise.all([at(ListOffsetTimestamps.EARLIEST), at(ListOffsetTimestamps.LATEST)]);
  return partitions.map((partition) => ({ partition, low: lows.get(partition) ?? 0, high: highs.get(partition) ?? 0 }));
}
