import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Rate } from "../core/config.js";
import { ServiceError } from "../core/errors.js";
import type { RedisClient } from "../core/redis-client.js";

export interface RateSettings {
  registerPerEmail: Rate;
  registerPerIp: Rate;
  verifyPerEmail: Rate;
  verifyPerIp: Rate;
}

export type LimitName = keyof RateSettings;

/** The limits of key issuance, kept in Redis (shared by every replica) or in memory (embedded mode). */
export class RateLimits {
  private constructor(private readonly limiters: Record<LimitName, RateLimiterAbstract>) {}

  static inMemory(settings: RateSettings): RateLimits {
    return new RateLimits(RateLimits.build(settings, (name, rate) => new RateLimiterMemory({ keyPrefix: name, points: rate.points, duration: rate.seconds })));
  }

  static onRedis(redis: RedisClient, settings: RateSettings): RateLimits {
    return new RateLimits(
      RateLimits.build(
        settings,
        (name, rate) =>
          new RateLimiterRedis({
            storeClient: redis,
            useRedisPackage: true,
            rejectIfRedisNotReady: true,
            keyPrefix: `ds:rl:${name}`,
            points: rate.points,
            duration: rate.seconds,
          }),
      ),
    );
  }

  private static build(settings: RateSettings, make: (name: LimitName, rate: Rate) => RateLimiterAbstract) {
    const entries = (Object.keys(settings) as LimitName[]).map((name) => [name, make(name, settings[name])]);
    return Object.fromEntries(entries) as Record<LimitName, RateLimiterAbstract>;
  }

  /** Takes one point from the limit for this key; throws RATE_LIMITED with the wait when none is left. An empty key is not limited. */
  async consume(name: LimitName, key: string): Promise<void> {
    if (!key) return;
    try {
      await this.limiters[name].consume(key);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        throw new ServiceError("RATE_LIMITED", "Too many requests; try again later.", {
          retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
        });
      }
      throw new ServiceError("UNAVAILABLE", "The rate limiter's store is unavailable; try again shortly.", {
        retryAfterSeconds: 1,
        cause: rejection,
      });
    }
  }
}
