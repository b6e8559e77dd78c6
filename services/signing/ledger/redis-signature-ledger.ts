import { guardRedis, type RedisClient } from "../../core/redis-client.js";
import type { Claim, SignatureLedger } from "./signature-ledger.js";

const entryKey = (scope: string, eventId: string) => `ds:signed:${scope}:${eventId}`;

// One script, so a claim and the check of an existing entry cannot interleave.
const CLAIM = `
local hash = redis.call('HGET', KEYS[1], 'hash')
if not hash then
  redis.call('HSET', KEYS[1], 'hash', ARGV[1], 'state', 'pending')
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'claimed'}
end
if hash ~= ARGV[1] then return {'conflict'} end
if redis.call('HGET', KEYS[1], 'state') == 'pending' then return {'in-progress'} end
return {'replay', redis.call('HGET', KEYS[1], 'document')}`;

const RELEASE = `
if redis.call('HGET', KEYS[1], 'hash') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == 'pending' then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/** The ledger in Redis, shared by every replica; documents are stored base64 (Redis strings come back as text). */
export class RedisSignatureLedger implements SignatureLedger {
  constructor(private readonly redis: RedisClient) {}

  claim(scope: string, eventId: string, requestHash: string, pendingMs: number): Promise<Claim> {
    return this.guard(async () => {
      const [kind, document] = (await this.redis.eval(CLAIM, {
        keys: [entryKey(scope, eventId)],
        arguments: [requestHash, String(pendingMs)],
      })) as [Claim["kind"], string?];
      return kind === "replay" ? { kind, document: Buffer.from(document!, "base64") } : ({ kind } as Claim);
    });
  }

  complete(scope: string, eventId: string, requestHash: string, document: Buffer, ttlMs: number): Promise<void> {
    return this.guard(async () => {
      const key = entryKey(scope, eventId);
      await this.redis.multi().hSet(key, { hash: requestHash, state: "done", document: document.toString("base64") }).pExpire(key, ttlMs).exec();
    });
  }

  release(scope: string, eventId: string, requestHash: string): Promise<void> {
    return this.guard(async () => {
      await this.redis.eval(RELEASE, { keys: [entryKey(scope, eventId)], arguments: [requestHash] });
    });
  }

  async close(): Promise<void> {
    if (this.redis.isOpen) await this.redis.close();
  }

  private guard<T>(operation: () => Promise<T>): Promise<T> {
    return guardRedis("signature store (Redis)", operation);
  }
}
