// The Kafka side of telemetry on a worker thread of its own (see KafkaThread):
// the producer writing accepted records, or, in one-process mode, the
// aggregator consuming them into the usage store. Encoding and decoding Kafka
// record batches costs more CPU per event than accepting the report, and here
// it does not hold up the thread answering HTTP requests; on threads of their
// own, the aggregator's batches do not hold up the producer's round trips.
import { parentPort, workerData } from "node:worker_threads";
import { DataDir } from "../core/data-dir.js";
import { createLogger } from "../core/logger.js";
import { kafkaClient } from "./kafka-client.js";
import type { FromKafkaThread, KafkaThreadSetup, ToKafkaThread } from "./kafka-thread-protocol.js";
import { KafkaUsageLog } from "./kafka-usage-log.js";
import { openUsageStore, redisOf } from "./open-usage-store.js";
import { UsageAggregator } from "./usage-aggregator.js";

const { config, role } = (workerData as { data: KafkaThreadSetup }).data;
const logger = createLogger(config.logLevel).child({ service: "telemetry", thread: `kafka ${role}` });
const port = parentPort!;
const post = (message: FromKafkaThread) => port.postMessage(message);

let usageLog: KafkaUsageLog | undefined;
const stops: Array<() => Promise<void>> = [];
if (role === "producer") {
  const log = new KafkaUsageLog(kafkaClient(config.kafkaBrokers, "docservice-telemetry", logger), config.telemetryTopic);
  stops.push(() => log.close());
  usageLog = log;
} else {
  const store = openUsageStore(redisOf(config, logger), new DataDir(config.dataDir), config);
  const aggregator = new UsageAggregator(
    kafkaClient(config.kafkaBrokers, "docservice-usage-aggregator", logger),
    store,
    { topic: config.telemetryTopic, groupId: config.telemetryConsumerGroup, reportLag: (records) => post({ type: "lag", records }) },
    logger,
  );
  aggregator.start();
  stops.push(() => aggregator.close(), () => store.close());
}

port.on("message", (message: ToKafkaThread) => {
  if (message.type === "write") {
    const { batchId } = message;
    if (!usageLog) return post({ type: "written", batchId, error: "this thread runs the aggregator, not the producer" });
    usageLog.write(message.records).then(
      () => post({ type: "written", batchId }),
      (error: unknown) => post({ type: "written", batchId, error: error instanceof Error ? error.message : String(error) }),
    );
  } else {
    void (async () => {
      for (const stop of stops) await stop().catch(() => {});
      post({ type: "closed" });
      port.close();
    })();
  }
});
