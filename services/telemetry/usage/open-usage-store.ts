import type { PlatformConfig } from "../../core/config.js";
import type { TelemetryConfig } from "../config.js";
import type { DataDir } from "../../core/data-dir.js";
import type { Logger } from "../../core/logger.js";
import { connectRedis, type RedisClient } from "../../core/redis-client.js";
import { EmbeddedUsageStore } from "./embedded-usage-store.js";
import { RedisUsageStore } from "./redis-usage-store.js";
import type { UsageStore } from "./usage-store.js";

/** One Redis connection for a thread's telemetry stores, when Redis is configured. */
export function redisOf(config: PlatformConfig & TelemetryConfig, logger: Logger): RedisClient | undefined {
  return config.redisUrl ? connectRedis(config.redisUrl, logger) : undefined;
}

/** The usage store: Redis when configured, else LMDB in the data directory (LMDB may be opened by several threads). */
export function openUsageStore(redis: RedisClient | undefined, dataDir: DataDir): UsageStore {
  return redis ? new RedisUsageStore(redis) : new EmbeddedUsageStore(dataDir.path("usage"));
}
