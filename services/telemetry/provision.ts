import type { PlatformConfig } from "../core/config.js";
import type { TelemetryConfig } from "./config.js";
import type { DataDir } from "../core/data-dir.js";
import type { HealthCheck } from "../core/health.js";
import type { Logger } from "../core/logger.js";
import { aggregatorProgress, exportSpoolSize } from "./telemetry-metrics.js";
import { EmbeddedLicenseKeyStore } from "./license-keys/embedded-license-key-store.js";
import { kafkaOptions } from "./kafka/kafka-options.js";
import { KafkaThread } from "./kafka/kafka-thread-client.js";
import type { LicenseKeyStore } from "./license-keys/license-key-store.js";
import type { RecordSink } from "./intake/record-sink.js";
import { RedisLicenseKeyStore } from "./license-keys/redis-license-key-store.js";
import { NO_REPLAY_GUARD } from "./intake/replay-guard.js";
import { openUsageStore, redisOf } from "./usage/open-usage-store.js";
import { Spool } from "./intake/spool.js";
import { TelemetryService } from "./telemetry-service.js";
import { UsageAggregator } from "./kafka/usage-aggregator.js";
import { UsageIntake } from "./intake/usage-intake.js";

export interface ProvisionedTelemetry {
  service: TelemetryService;
  close(): Promise<void>;
}

type Stop = () => Promise<void>;

/**
 * TelemetryService from config. With KAFKA_BROKERS: reports go to Kafka (or
 * the spool while it is away) through the producer on a thread of its own;
 * when `withAggregator`, the consumer group that counts them runs on another.
 * Without: the embedded pipeline, where the spool feeds the local usage store
 * directly.
 */
export function provisionTelemetry(config: PlatformConfig & TelemetryConfig, dataDir: DataDir, logger: Logger, withAggregator: boolean): ProvisionedTelemetry {
  const log = logger.child({ service: "telemetry" });
  const stops: Stop[] = [];
  const redis = redisOf(config, log);
  const usageStore = openUsageStore(redis, dataDir);
  stops.push(() => usageStore.close());
  const licenseKeys: LicenseKeyStore = redis ? new RedisLicenseKeyStore(redis) : new EmbeddedLicenseKeyStore(dataDir.path("license-keys"));
  stops.push(() => licenseKeys.close());

  let sink: RecordSink;
  let guard = NO_REPLAY_GUARD;
  if (config.kafkaBrokers.length > 0) {
    const producer = new KafkaThread({ config, role: "producer" }, log, undefined);
    stops.unshift(() => producer.close());
    sink = guard = producer;
    if (withAggregator) {
      const aggregator = new KafkaThread({ config, role: "aggregator" }, log, aggregatorProgress);
      stops.unshift(() => aggregator.close());
    }
  } else {
    sink = {
      write: async (records) => {
        await usageStore.record(records);
        aggregatorProgress.applied(records.length);
      },
    };
  }
  const spool = Spool.open(dataDir.path("usage-spool"), { maxBytes: config.telemetrySpoolMaxBytes });
  const intake = new UsageIntake(sink, guard, spool, { directTimeoutMs: config.telemetryDirectTimeoutMs, retryDirectAfterMs: 2000, handOverMs: config.telemetrySpoolHandOverMs }, log);
  stops.unshift(() => intake.close());
  exportSpoolSize(() => intake.spooledBytes);

  const service = new TelemetryService(intake, usageStore, licenseKeys);
  log.info({ pipeline: config.kafkaBrokers.length > 0 ? `kafka ${config.kafkaBrokers.join(",")}` : "embedded", spooled: spool.bytes }, "telemetry service ready");
  return {
    service,
    close: async () => {
      for (const stop of stops) await stop();
    },
  };
}

/** The usage aggregator alone (role `aggregator`): Kafka consumer group → usage store. */
export function provisionAggregator(config: PlatformConfig & TelemetryConfig, dataDir: DataDir, logger: Logger): { health: HealthCheck; close: Stop } {
  const log = logger.child({ service: "usage-aggregator" });
  const usageStore = openUsageStore(redisOf(config, log), dataDir);
  const options = { topic: config.telemetryTopic, groupId: config.telemetryConsumerGroup, progress: aggregatorProgress };
  const aggregator = new UsageAggregator(kafkaOptions(config.kafkaBrokers, "docservice-usage-aggregator"), usageStore, options, log);
  aggregator.start();
  return {
    health: () => aggregator.health(),
    close: async () => {
      await aggregator.close();
      await usageStore.close();
    },
  };
}
