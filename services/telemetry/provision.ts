import { Gauge } from "prom-client";
import type { PlatformConfig } from "../core/config.js";
import type { TelemetryConfig } from "./config.js";
import type { DataDir } from "../core/data-dir.js";
import type { HealthCheck } from "../core/health.js";
import type { Logger } from "../core/logger.js";
import { serviceMetrics } from "../core/service-metrics.js";
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
    const producer = new KafkaThread({ config, role: "producer" }, log, () => {});
    stops.unshift(() => producer.close());
    sink = guard = producer;
    if (withAggregator) {
      const aggregator = new KafkaThread({ config, role: "aggregator" }, log, consumerLagGauge());
      stops.unshift(() => aggregator.close());
    }
  } else {
    sink = { write: (records) => usageStore.record(records) };
  }
  const spool = Spool.open(dataDir.path("usage-spool"), { maxBytes: config.telemetrySpoolMaxBytes });
  const intake = new UsageIntake(sink, guard, spool, { directTimeoutMs: config.telemetryDirectTimeoutMs, retryDirectAfterMs: 2000, handOverMs: config.telemetrySpoolHandOverMs }, log);
  stops.unshift(() => intake.close());
  exportSpoolSize(intake);

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
  const options = { topic: config.telemetryTopic, groupId: config.telemetryConsumerGroup, reportLag: consumerLagGauge() };
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

/** Registers `docservice_usage_consumer_lag` (replacing an earlier one) and returns its setter. */
function consumerLagGauge(): (records: number) => void {
  serviceMetrics.removeSingleMetric("docservice_usage_consumer_lag");
  const gauge = new Gauge({
    name: "docservice_usage_consumer_lag",
    help: "Usage records in Kafka not yet applied to the usage store, summed over partitions.",
    registers: [serviceMetrics],
  });
  return (records) => gauge.set(records);
}

function exportSpoolSize(intake: UsageIntake): void {
  serviceMetrics.removeSingleMetric("docservice_usage_spool_bytes");
  new Gauge({
    name: "docservice_usage_spool_bytes",
    help: "Usage events waiting in the local spool for Kafka, in bytes.",
    registers: [serviceMetrics],
    collect() {
      this.set(intake.spooledBytes);
    },
  });
}
