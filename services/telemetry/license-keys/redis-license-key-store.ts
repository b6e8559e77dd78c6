import { guardRedis, type RedisClient } from "../../core/redis-client.js";
import type { LicenseKeyInfo, LicenseKeyStore } from "./license-key-store.js";

/** One hash: license key → JSON `{customer, createdAt}` (ms). */
const LICENSE_KEYS = "ds:license-keys";

// HSETNX then HGET in one script: an existing key is kept and returned as it is.
const ADD = `
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
return redis.call('HGET', KEYS[1], ARGV[1])`;

interface Stored {
  customer: string;
  createdAt: number;
}

const info = (licenseKey: string, json: string): LicenseKeyInfo => {
  const { customer, createdAt } = JSON.parse(json) as Stored;
  return { licenseKey, customer, createdAt: new Date(createdAt) };
};

/** The license keys allowed to report usage, in Redis, shared by every replica. */
export class RedisLicenseKeyStore implements LicenseKeyStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly now: () => number = Date.now,
  ) {}

  add(licenseKey: string, customer: string): Promise<LicenseKeyInfo> {
    const stored: Stored = { customer, createdAt: this.now() };
    return this.guard(async () => {
      const json = (await this.redis.eval(ADD, { keys: [LICENSE_KEYS], arguments: [licenseKey, JSON.stringify(stored)] })) as string;
      return info(licenseKey, json);
    });
  }

  remove(licenseKey: string): Promise<boolean> {
    return this.guard(async () => (await this.redis.hDel(LICENSE_KEYS, licenseKey)) === 1);
  }

  find(licenseKey: string): Promise<LicenseKeyInfo | undefined> {
    return this.guard(async () => {
      const json = await this.redis.hGet(LICENSE_KEYS, licenseKey);
      return json == null ? undefined : info(licenseKey, json);
    });
  }

  list(): Promise<LicenseKeyInfo[]> {
    return this.guard(async () => {
      const all = await this.redis.hGetAll(LICENSE_KEYS);
      // By license key, as the embedded store lists them.
      return Object.keys(all)
        .sort()
        .map((licenseKey) => info(licenseKey, all[licenseKey]));
    });
  }

  async close(): Promise<void> {
    if (this.redis.isOpen) await this.redis.close();
  }

  private guard<T>(operation: () => Promise<T>): Promise<T> {
    return guardRedis("license key store (Redis)", operation);
  }
}

