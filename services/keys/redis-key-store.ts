import { guardRedis, type RedisClient } from "../core/redis-client.js";
import type { ApiKeyRecord, KeyStore, PendingCode } from "./key-store.js";

const codeKey = (email: string) => `ds:code:${email}`;
const apiKey = (keyId: string) => `ds:key:${keyId}`;
const keysOfEmail = (email: string) => `ds:email-keys:${email}`;

// Atomic so that concurrent guesses cannot all read the code before any is counted.
const RECORD_ATTEMPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
return { redis.call('HGET', KEYS[1], 'hash'), redis.call('HGET', KEYS[1], 'expiresAt'), attempts }`;

const CONSUME_CODE = `
if redis.call('HGET', KEYS[1], 'hash') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export class RedisKeyStore implements KeyStore {
  constructor(private readonly redis: RedisClient) {}

  saveCode(email: string, code: PendingCode, ttlMs: number): Promise<void> {
    return this.guard(async () => {
      await this.redis
        .multi()
        .del(codeKey(email))
        .hSet(codeKey(email), { hash: code.codeHash, expiresAt: String(code.expiresAt), attempts: "0" })
        .pExpire(codeKey(email), ttlMs)
        .exec();
    });
  }

  recordAttempt(email: string) {
    return this.guard(async () => {
      const reply = (await this.redis.eval(RECORD_ATTEMPT, { keys: [codeKey(email)] })) as [string, string, number] | null;
      if (!reply) return undefined;
      const [codeHash, expiresAt, attempts] = reply;
      return { code: { codeHash, expiresAt: Number(expiresAt) }, attempts: Number(attempts) };
    });
  }

  consumeCode(email: string, codeHash: string): Promise<boolean> {
    return this.guard(async () => (await this.redis.eval(CONSUME_CODE, { keys: [codeKey(email)], arguments: [codeHash] })) === 1);
  }

  deleteCode(email: string): Promise<void> {
    return this.guard(async () => {
      await this.redis.del(codeKey(email));
    });
  }

  saveKey(record: ApiKeyRecord): Promise<void> {
    return this.guard(async () => {
      await this.redis
        .multi()
        .hSet(apiKey(record.keyId), {
          displayPrefix: record.displayPrefix,
          email: record.email,
          createdAt: String(record.createdAt),
        })
        .sAdd(keysOfEmail(record.email), record.keyId)
        .exec();
    });
  }

  findKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    return this.guard(async () => {
      const fields = await this.redis.hGetAll(apiKey(keyId));
      if (!fields.email) return undefined;
      return { keyId, displayPrefix: fields.displayPrefix, email: fields.email, createdAt: Number(fields.createdAt) };
    });
  }

  deleteKey(keyId: string): Promise<string[]> {
    return this.guard(async () => {
      const email = await this.redis.hGet(apiKey(keyId), "email");
      if (!email) return [];
      await this.redis.multi().del(apiKey(keyId)).sRem(keysOfEmail(email), keyId).exec();
      return [keyId];
    });
  }

  deleteKeysOf(email: string): Promise<string[]> {
    return this.guard(async () => {
      const keyIds = await this.redis.sMembers(keysOfEmail(email));
      if (keyIds.length === 0) return [];
      await this.redis
        .multi()
        .del([...keyIds.map(apiKey), keysOfEmail(email)])
        .exec();
      return keyIds;
    });
  }

  ping(): Promise<void> {
    return this.guard(async () => {
      await this.redis.ping();
    });
  }

  async close(): Promise<void> {
    if (this.redis.isOpen) await this.redis.close();
  }

  private guard<T>(operation: () => Promise<T>): Promise<T> {
    return guardRedis("key store", operation);
  }
}
