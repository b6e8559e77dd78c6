// The Kafka side of telemetry on a worker thread of its own (see KafkaThread):
// the producer writing accepted records, or, in one-process mode, the
// aggregator consuming them into the usage store. Encoding and decoding Kafka
// record batches costs more CPU per event than accepting the report, and here
// it does not hold up the thread answering HTTP requests; on threads of their
// own, the aggregator's batches do not hold up the producer's round trips.
import { parentPort, workerData } from "node:worker_threads";
import { Admin } from "@platformatic/kafka";
import { DataDir } from "../../core/data-dir.js";
import { createLogger } from "../../core/logger.js";
import { stopAll, type Stop } from "../../core/shutdown.js";
import { startTracing } from "../../core/tracing.js";
import { KafkaLogReader } from "./kafka-log-reader.js";
import { kafkaOptions } from "./kafka-options.js";
import type { FromKafkaThread, KafkaThreadSetup, ToKafkaThread } from "./kafka-thread-protocol.js";
import { KafkaUsageLog } from "./kafka-usage-log.js";
import { openUsageStore, redisOf } from "../usage/open-usage-store.js";
import { topicOffsets } from "./topic-offsets.js";
import { UsageAggregator } from "./usage-aggregator.js";

const { config, role, tracedAs } = (workerData as { data: KafkaThreadSetup }).data;
if (tracedAs) startTracing(tracedAs);
const logger = createLogger(config.logLevel, { traced: tracedAs !== undefined }).child({ service: "telemetry", thread: `kafka ${role}` });
const port = parentPort!;
const post = (message: FromKafkaThread) => port.postMessage(message);

let usageLog: KafkaUsageLog | undefined;
let reader: KafkaLogReader | undefined;
let closing = false;
const stops: Stop[] = [];
if (role === "producer") {
  const options = kafkaOptions(config.kafkaBrokers, "docservice-telemetry");
  const admin = new Admin(options);
  const log = new KafkaUsageLog(options, config.telemetryTopic);
  reader = new KafkaLogReader(options, admin, config.telemetryTopic, "docservice-telemetry-replay");
  stops.push(() => log.close(), () => admin.close());
  usageLog = log;
  void learnPosition(log, admin);
} else {
  const store = openUsageStore(redisOf(config, logger), new DataDir(config.dataDir));
  const aggregator = new UsageAggregator(
    kafkaOptions(config.kafkaBrokers, "docservice-usage-aggregator"),
    store,
    { topic: config.telemetryTopic, groupId: config.telemetryConsumerGroup, progress: { lag: (byPartition) => post({ type: "lag", byPartition }), applied: (events) => post({ type: "applied", events }) } },
    logger,
  );
  aggregator.start();
  stops.push(() => aggregator.close(), () => store.close());
}

/** The topic's high watermarks, once Kafka answers: the position before any write of this thread. */
async function learnPosition(log: KafkaUsageLog, admin: Admin): Promise<void> {
  for (let delay = 500; !closing; delay = Math.min(delay * 2, 10_000)) {
    try {
      const offsets = await topicOffsets(admin, config.telemetryTopic);
      log.learn(Object.fromEntries(offsets.map((p) => [p.partition, p.high])));
      post({ type: "position", position: log.position() });
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
    }
  }
  // closed meanwhile: a connection made after the close's would keep the thread alive
  if (closing) await admin.close().catch(() => {});
}

/**
 * How long the Kafka clients get to close (the aggregator leaving its group).
 * A consumer whose broker is unreachable can take several seconds to
 * disconnect, longer than a restart may take (bench/README.md, "Kafka thread
 * close"); the thread does not wait for it: the group moves its partitions
 * after the session timeout, and the offsets fence any redelivery.
 */
const CLOSE_GRACE_MS = 2000;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

port.on("message", (message: ToKafkaThread) => {
  if (message.type === "write") {
    const { batchId } = message;
    if (!usageLog) return post({ type: "written", batchId, error: "this thread runs the aggregator, not the producer" });
    const log = usageLog;
    log.writeSerialized(message.keys, message.values, message.traces).then(
      () => post({ type: "written", batchId, position: log.position() }),
      (error: unknown) => post({ type: "written", batchId, error: messageOf(error) }),
    );
  } else if (message.type === "alreadyLogged") {
    const { requestId } = message;
    if (!reader) return post({ type: "alreadyLogged", requestId, error: "this thread runs the aggregator, not the producer" });
    reader.alreadyLogged(message.eventIds, message.since).then(
      (eventIds) => post({ type: "alreadyLogged", requestId, eventIds }),
      (error: unknown) => post({ type: "alreadyLogged", requestId, error: messageOf(error) }),
    );
  } else {
    closing = true;
    void (async () => {
      await stopAll(stops, CLOSE_GRACE_MS, logger);
      // a client may leave retry timers behind for a broker it could not reach, which
      // would keep the thread alive until KafkaThread's close timeout (15 s per thread)
      process.exit(0);
    })();
  }
});
