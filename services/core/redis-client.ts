import { ServiceError } from "./errors.js";
import { createClient } from "redis";
import type { Logger } from "./logger.js";

/**
 * A Redis client that fails fast while disconnected (no offline queue, so a
 * request gets a 503 instead of hanging) and keeps reconnecting in the
 * background. Start-up does not wait for Redis: health reports it down until
 * it answers.
 */
export function connectRedis(url: string, logger: Logger) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 2000) },
  });
  let down = false;
  client.on("error", (error: Error) => {
    if (!down) logger.warn({ err: error.message }, "redis connection lost; reconnecting");
    down = true;
  });
  client.on("ready", () => {
    if (down) logger.info("redis connection restored");
    down = false;
  });
  client.connect().catch((error: Error) => logger.error({ err: error.message }, "redis connect failed"));
  return client;
}

export type RedisClient = ReturnType<typeof connectRedis>;

/** Runs a Redis operation; any failure (Redis down, a timeout) becomes a 503 saying which store is unavailable. */
export async function guardRedis<T>(store: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw new ServiceError("UNAVAILABLE", `The ${store} is unavailable; try again shortly.`, { retryAfterSeconds: 1, cause: error });
  }
}
