// kafkajs 2.2.4 is patched (patches/kafkajs+2.2.4.patch) to encode produce
// requests with less work: varints written in place instead of through a
// Buffer per varint, small varlongs without Long arithmetic, buffers not
// zero-filled, and records grouped by partition in linear time. The bytes
// must stay what Kafka expects: these tests read them back with kafkajs' own
// decoders.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, test } from "node:test";

const load = createRequire(import.meta.url);

interface EncoderInstance {
  writeVarInt(value: number): EncoderInstance;
  writeVarLong(value: number): EncoderInstance;
  buffer: Buffer;
}
interface DecoderInstance {
  readVarInt(): number;
  readVarLong(): { toString(): string };
}
const Encoder = load("kafkajs/src/protocol/encoder.js") as (new () => EncoderInstance) & { sizeOfVarLong(value: number): number };
const Decoder = load("kafkajs/src/protocol/decoder.js") as new (buffer: Buffer) => DecoderInstance;
const Record = load("kafkajs/src/protocol/recordBatch/record/v0/index.js") as (record: object) => { buffer: Buffer };
const decodeRecord = load("kafkajs/src/protocol/recordBatch/record/v0/decoder.js") as (
  decoder: DecoderInstance,
  batch: object,
) => { key: Buffer; value: Buffer; offset: string; timestamp: string; headers: Record<string, Buffer> };
const groupMessagesPerPartition = load("kafkajs/src/producer/groupMessagesPerPartition.js") as (args: {
  topic: string;
  partitionMetadata: unknown[];
  messages: Array<{ key: string; value: string }>;
  partitioner(args: { message: { key: string } }): number;
}) => Record<string, Array<{ key: string; value: string }>>;

const edges = [0, 1, -1, 63, 64, -64, -65, 127, 128, 8191, 8192, -8193, 2 ** 20, -(2 ** 20), 2 ** 30 - 1, -(2 ** 30), 2 ** 30, -(2 ** 30) - 1];

describe("kafkajs encoding (patched)", () => {
  test("varints and varlongs read back as written, small and large", () => {
    const longs = [...edges, 2 ** 31 - 1, -(2 ** 31), 2 ** 40, -(2 ** 40), 1_763_900_000_000];
    for (const value of edges) assert.equal(new Decoder(new Encoder().writeVarInt(value).buffer).readVarInt(), value, `varint ${value}`);
    for (const value of longs) {
      const bytes = new Encoder().writeVarLong(value).buffer;
      assert.equal(new Decoder(bytes).readVarLong().toString(), String(value), `varlong ${value}`);
      assert.equal(Encoder.sizeOfVarLong(value), bytes.length, `size of varlong ${value}`);
    }
  });

  test("a record decodes to its key, value, headers, offset and timestamp", () => {
    const value = `{"documentId":"HASH-0A1B2C3D","note":"é ✓"}`.repeat(20);
    for (const [offsetDelta, timestampDelta] of [[0, 0], [499, 3], [70_000, 2 ** 35]]) {
      const bytes = Record({ key: "lic_0123456789", value, headers: { trace: "a", multi: ["b", "c"] }, offsetDelta, timestampDelta }).buffer;
      const decoder = new Decoder(bytes);
      decoder.readVarInt(); // the record's length
      const record = decodeRecord(decoder, { firstOffset: "1000", firstTimestamp: "1763900000000" });
      assert.equal(record.key.toString(), "lic_0123456789");
      assert.equal(record.value.toString(), value);
      assert.equal(record.offset, String(1000 + offsetDelta));
      assert.equal(record.timestamp, String(1_763_900_000_000 + timestampDelta));
      assert.equal(record.headers.trace.toString(), "a");
      assert.deepEqual((record.headers.multi as unknown as Buffer[]).map(String), ["b", "c"]);
    }
  });

  test("grouping by partition keeps each partition's order, in linear time", () => {
    const messages = Array.from({ length: 200_000 }, (_, i) => ({ key: `k${i % 3}`, value: String(i) }));
    const started = performance.now();
    const groups = groupMessagesPerPartition({
      topic: "t",
      partitionMetadata: [{}, {}, {}],
      messages,
      partitioner: ({ message }) => Number(message.key.slice(1)),
    });
    // Copying the partition's list per message (unpatched) takes minutes for 200,000 messages.
    assert.ok(performance.now() - started < 5000, "grouping 200,000 messages took over 5 s");
    assert.deepEqual(Object.keys(groups).sort(), ["0", "1", "2"]);
    for (const [partition, group] of Object.entries(groups)) {
      assert.deepEqual(
        group.map((m) => Number(m.value)),
        messages.map((m, i) => i).filter((i) => i % 3 === Number(partition)),
      );
    }
  });
});
