// The Kafka side of telemetry on a worker thread of its own (see KafkaThread):
// the producer writing accepted records, and, when asked, the aggregator
// consuming them into the usage store. Encoding and decoding Kafka record
// batches costs more CPU per event than accepting the report, and here it
// does not hold up the thread answering HTTP requests.
import { parentPort, workerData } from "node:worker_threads";
import { DataDir } from "../core/data-dir.js";
import { createLogger } from "../core/logger.js";
import { kafkaClient } from "./kafka-client.js";
import type { FromKafkaThread, KafkaThreadSetup, ToKafkaThread } from "./kafka-thread-protocol.js";
import { KafkaUsageLog } from "./kafka-usage-log.js";
import { openUsageStore, redisOf } from "./open-usage-store.js";
import { UsageAggregator } from "./usage-aggregator.js";

const { config, withAggregator } = (workerData as { data: KafkaThreadSetup }).data;
const logger = createLogger(config.logLevel).child({ service: "telemetry", thread: "kafka" });
const port = parentPort!;
const post = (message: FromKafkaThread) => port.postMessage(message);

const usageLog = new KafkaUsageLog(kafkaClient(config.kafkaBrokers, "docservice-telemetry", logger), config.telemetryTopic);
const stops: Array<() => Promise<void>> = [() => usageLog.close()];
if (withAggregator) {
  const store = openUsageStore(redisOf(config, logger), new DataDir(config.dataDir));
  const aggregator = new UsageAggregator(
    kafkaClient(config.kafkaBrokers, "docservice-usage-aggregator", logger),
    store,
    { topic: config.telemetryTopic, groupId: config.telemetryConsumerGroup, reportLag: (records) => post({ type: "lag", records }) },
    logger,
  );
  aggregator.start();
  stops.unshift(() => aggregator.close(), () => store.close());
}

port.on("message", (message: ToKafkaThread) => {
  if (message.type === "write") {
    const { batchId } = message;
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
