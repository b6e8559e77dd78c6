import { TelemetryService } from "../../gen/es/docservice/v1/telemetry_pb.js";
import { TelemetryServiceService } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import type { Module } from "../contracts/module.js";
import { ConfigError, type PlatformConfig } from "../core/config.js";
import type { TelemetryConfig } from "./config.js";
import { provisionAggregator, provisionTelemetry } from "./provision.js";
import { telemetryRoutes } from "./telemetry-routes.js";
import { remoteTelemetry } from "./telemetry-client.js";
import type { TelemetryModuleApi } from "./telemetry-service.js";
import { CALL_DEADLINES_MS } from "../contracts/call-deadlines.js";

/** Usage reports from the editors' client library, counted per license key; the admin's license keys. */
export const telemetryModule: Module<TelemetryModuleApi, PlatformConfig & TelemetryConfig> = {
  name: "telemetry",
  roles: ["all", "telemetry"],
  service: { descriptor: TelemetryService, definition: TelemetryServiceService },
  address: { variable: "TELEMETRY_SERVICE_ADDR", of: (config) => config.telemetryServiceAddress, timeoutMs: CALL_DEADLINES_MS.telemetry },
  async start({ config, dataDir, logger, embedded }) {
    // one process alone also counts what it collects; split, the aggregator role does
    const telemetry = provisionTelemetry(config, dataDir, logger, embedded);
    return { api: telemetry.service, health: () => telemetry.service.health(), close: telemetry.close };
  },
  connect: (address, { config, transport }) => remoteTelemetry(address, telemetryModule.address!.timeoutMs(config), transport),
  routes: (telemetry, config, messages) =>
    telemetryRoutes(telemetry, {
      collectBodyBytes: messages.route("POST", "/v1/collect"),
      licenseKeyBodyBytes: messages.route("POST", "/v1/admin/license-keys"),
    }),
};

/** The Kafka consumer group that applies usage records to the usage store, split from the telemetry module; /metrics and /health on PORT (services/main.ts). */
export const aggregatorModule: Module<object, PlatformConfig & TelemetryConfig> = {
  name: "aggregator",
  roles: ["aggregator"],
  async start({ config, dataDir, logger }) {
    if (config.kafkaBrokers.length === 0) throw new ConfigError(["KAFKA_BROKERS: required by the aggregator role"]);
    const aggregator = provisionAggregator(config, dataDir, logger);
    return { api: {}, health: aggregator.health, close: aggregator.close };
  },
};
