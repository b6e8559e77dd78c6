import type { BaseOptions } from "@platformatic/kafka";

/**
 * What every @platformatic/kafka client of the platform shares. `retries` is
 * set: for an idempotent producer the library reads 0 or 1 as "retry
 * forever", and a write to a stalled broker would then never fail over to
 * the spool. The usage topic is created on first use where the broker allows
 * it (a DocService's operator creates it as its spec says beforehand).
 */
export function kafkaOptions(brokers: string[], clientId: string): BaseOptions {
  return { clientId, bootstrapBrokers: brokers, connectTimeout: 3000, requestTimeout: 10_000, retries: 2, retryDelay: 100, autocreateTopics: true };
}
