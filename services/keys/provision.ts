import type { PlatformConfig } from "../core/config.js";
import type { KeysConfig } from "./config.js";
import type { DataDir } from "../core/data-dir.js";
import type { Logger } from "../core/logger.js";
import type { Mailer } from "./mail/mailer.js";
import { OutboxMailer } from "./mail/outbox-mailer.js";
import { SmtpMailer } from "./mail/smtp-mailer.js";
import { connectRedis } from "../core/redis-client.js";
import { EmbeddedKeyStore } from "./embedded-key-store.js";
import { KeyService } from "./key-service.js";
import type { KeyStore } from "./key-store.js";
import { RedisKeyStore } from "./redis-key-store.js";
import { RateLimits } from "./rate-limits.js";

export interface ProvisionedKeyService {
  service: KeyService;
  close(): Promise<void>;
}

/** Builds KeyService from config: Redis or the embedded store, SMTP or the outbox. */
export function provisionKeyService(config: PlatformConfig & KeysConfig, dataDir: DataDir, logger: Logger, now?: () => number): ProvisionedKeyService {
  const log = logger.child({ service: "keys" });
  let store: KeyStore;
  let limits: RateLimits;
  const rates = {
    registerPerEmail: config.registerRatePerEmail,
    registerPerIp: config.registerRatePerIp,
    verifyPerEmail: config.verifyRatePerEmail,
    verifyPerIp: config.verifyRatePerIp,
  };
  if (config.redisUrl) {
    const redis = connectRedis(config.redisUrl, log);
    store = new RedisKeyStore(redis);
    limits = RateLimits.onRedis(redis, rates);
  } else {
    store = new EmbeddedKeyStore(dataDir.path("keys"), now);
    limits = RateLimits.inMemory(rates);
  }
  const mailer: Mailer = config.smtpHost
    ? new SmtpMailer({
        host: config.smtpHost,
        port: config.smtpPort,
        secure: config.smtpSecure,
        user: config.smtpUser,
        password: config.smtpPassword,
        from: config.mailFrom,
      })
    : new OutboxMailer(dataDir.path("outbox"), config.mailFrom, log);
  log.info({ store: config.redisUrl ? "redis" : "embedded", mail: config.smtpHost ? "smtp" : `outbox ${dataDir.path("outbox")}` }, "key service ready");

  const service = new KeyService({
    store,
    mailer,
    limits,
    now,
    settings: {
      codeTtlSeconds: config.codeTtlSeconds,
      codeMaxAttempts: config.codeMaxAttempts,
      codePepper: config.codePepper ?? dataDir.secret("code-pepper"),
      authCacheTtlMs: config.authCacheTtlMs,
    },
  });
  return {
    service,
    close: async () => {
      await Promise.allSettled([store.close(), mailer.close()]);
    },
  };
}
