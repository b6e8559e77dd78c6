import { Gauge } from "prom-client";
import { TelemetryServiceService } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import type { Config } from "../core/config.js";
import type { DataDir } from "../core/data-dir.js";
import { hostedUnary, type HostedService } from "../core/grpc-host.js";
import type { Logger } from "../core/logger.js";
import { connectRedis, type RedisClient } from "../core/redis-client.js";
import { serviceMetrics } from "../core/service-metrics.js";
import { EmbeddedLicenseKeyStore } from "./embedded-license-key-store.js";
import { EmbeddedUsageStore } from "./embedded-usage-store.js";
import { kafkaClient } from "./kafka-client.js";
import { KafkaUsageLog } from "./kafka-usage-log.js";
import type { LicenseKeyStore } from "./license-key-store.js";
import type { RecordSink } from "./record-sink.js";
import { RedisLicenseKeyStore } from "./redis-license-key-store.js";
import { RedisUsageStore } from "./redis-usage-store.js";
import { Spool } from "./spool.js";
import { TelemetryService } from "./telemetry-service.js";
import { UsageAggregator } from "./usage-aggregator.js";
import { UsageIntake } from "./usage-intake.js";
import type { UsageStore } from "./usage-store.js";

export const TELEMETRY_SERVICE_NAME = "docservice.v1.TelemetryService";

export interface ProvisionedTelemetry {
  service: TelemetryService;
  hosted: HostedService;
  close(): Promise<void>;
}

type Stop = () => Promise<void>;

/** One Redis connection for the process's telemetry stores, when Redis is configured. */
function redisOf(config: Config, logger: Logger): RedisClient | undefined {
  return config.redisUrl ? connectRedis(config.redisUrl, logger) : undefined;
}

/** The usage store: Redis when configured, else LMDB in the data directory. */
function openUsageStore(redis: RedisClient | undefined, dataDir: DataDir, stops: Stop[]): UsageStore {
  const store = redis ? new RedisUsageStore(redis) : new EmbeddedUsageStore(dataDir.path("usage"));
  stops.push(() => store.close());
  return store;
}

/**
 * TelemetryService from config. With KAFKA_BROKERS: reports go to Kafka (or
 * the spool while it is away) and, when `withAggregator`, this process also
 * runs the consumer group that counts them. Without: the embedded pipeline,
 * where the spool feeds the local usage store directly.
 */
export function provisionTelemetry(config: Config, dataDir: DataDir, logger: Logger, withAggregator: boolean): ProvisionedTelemetry {
  const log = logger.child({ service: "telemetry" });
  const stops: Stop[] = [];
  const redis = redisOf(config, log);
  const usageStore = openUsageStore(redis, dataDir, stops);
  const licenseKeys: LicenseKeyStore = redis ? new RedisLicenseKeyStore(redis) : new EmbeddedLicenseKeyStore(dataDir.path("license-keys"));
  stops.push(() => licenseKeys.close());

  let sink: RecordSink;
  if (config.kafkaBrokers.length > 0) {
    const kafka = kafkaClient(config.kafkaBrokers, "docservice-telemetry", log);
    const usageLog = new KafkaUsageLog(kafka, config.telemetryTopic);
    stops.unshift(() => usageLog.close());
    sink = usageLog;
    if (withAggregator) stops.unshift(startAggregator(config, usageStore, log).close);
  } else {
    sink = { write: (records) => usageStore.record(records) };
  }
  const spool = Spool.open(dataDir.path("usage-spool"), { maxBytes: config.telemetrySpoolMaxBytes });
  const intake = new UsageIntake(sink, spool, { directTimeoutMs: config.telemetryDirectTimeoutMs, retryDirectAfterMs: 2000 }, log);
  stops.unshift(() => intake.close());
  exportSpoolSize(intake);

  const service = new TelemetryService(intake, usageStore, licenseKeys);
  log.info({ pipeline: config.kafkaBrokers.length > 0 ? `kafka ${config.kafkaBrokers.join(",")}` : "embedded", spooled: spool.bytes }, "telemetry service ready");
  return {
    service,
    hosted: hostedUnary(TELEMETRY_SERVICE_NAME, TelemetryServiceService, service, () => service.health()),
    close: async () => {
      for (const stop of stops) await stop();
    },
  };
}

/** The usage aggregator alone (role `aggregator`): Kafka consumer group → usage store. */
export function provisionAggregator(config: Config, dataDir: DataDir, logger: Logger): { close: Stop } {
  const log = logger.child({ service: "usage-aggregator" });
  const stops: Stop[] = [];
  const usageStore = openUsageStore(redisOf(config, log), dataDir, stops);
  const aggregator = startAggregator(config, usageStore, log);
  return {
    close: async () => {
      await aggregator.close();
      for (const stop of stops) await stop();
    },
  };
}

function startAggregator(config: Config, store: UsageStore, logger: Logger): { close: Stop } {
  const kafka = kafkaClient(config.kafkaBrokers, "docservice-usage-aggregator", logger);
  const aggregator = new UsageAggregator(kafka, store, { topic: config.telemetryTopic, groupId: config.telemetryConsumerGroup, metrics: serviceMetrics }, logger);
  aggregator.start();
  return { close: () => aggregator.close() };
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
