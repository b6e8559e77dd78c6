import { open, type RootDatabase } from "lmdb";
import type { ApiKeyRecord, KeyStore, PendingCode } from "./key-store.js";

interface StoredCode extends PendingCode {
  attempts: number;
}

const codeKey = (email: string) => `code:${email}`;
const apiKey = (keyId: string) => `key:${keyId}`;
const keysOfEmail = (email: string) => `email-keys:${email}`;

/**
 * The embedded-mode store: an LMDB database in the data directory, so keys
 * survive a restart. Each method runs in one synchronous write transaction,
 * which makes it atomic within this process.
 */
export class EmbeddedKeyStore implements KeyStore {
  private readonly db: RootDatabase;

  constructor(path: string, private readonly now: () => number = Date.now) {
    this.db = open({ path, compression: false });
    this.sweepExpiredCodes();
  }

  async saveCode(email: string, code: PendingCode): Promise<void> {
    await this.db.put(codeKey(email), { ...code, attempts: 0 } satisfies StoredCode);
  }

  async recordAttempt(email: string) {
    return this.db.transactionSync(() => {
      const stored = this.db.get(codeKey(email)) as StoredCode | undefined;
      if (!stored) return undefined;
      const attempts = stored.attempts + 1;
      this.db.putSync(codeKey(email), { ...stored, attempts });
      return { code: { codeHash: stored.codeHash, expiresAt: stored.expiresAt }, attempts };
    });
  }

  async consumeCode(email: string, codeHash: string): Promise<boolean> {
    return this.db.transactionSync(() => {
      const stored = this.db.get(codeKey(email)) as StoredCode | undefined;
      if (stored?.codeHash !== codeHash) return false;
      return this.db.removeSync(codeKey(email));
    });
  }

  async deleteCode(email: string): Promise<void> {
    await this.db.remove(codeKey(email));
  }

  async saveKey(record: ApiKeyRecord): Promise<void> {
    this.db.transactionSync(() => {
      this.db.putSync(apiKey(record.keyId), record);
      const ids = (this.db.get(keysOfEmail(record.email)) as string[] | undefined) ?? [];
      this.db.putSync(keysOfEmail(record.email), [...ids, record.keyId]);
    });
    await this.db.flushed;
  }

  async findKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    return this.db.get(apiKey(keyId)) as ApiKeyRecord | undefined;
  }

  async deleteKey(keyId: string): Promise<string[]> {
    return this.db.transactionSync(() => {
      const record = this.db.get(apiKey(keyId)) as ApiKeyRecord | undefined;
      if (!record) return [];
      this.db.removeSync(apiKey(keyId));
      const ids = (this.db.get(keysOfEmail(record.email)) as string[] | undefined) ?? [];
      this.db.putSync(keysOfEmail(record.email), ids.filter((id) => id !== keyId));
      return [keyId];
    });
  }

  async deleteKeysOf(email: string): Promise<string[]> {
    return this.db.transactionSync(() => {
      const ids = (this.db.get(keysOfEmail(email)) as string[] | undefined) ?? [];
      for (const id of ids) this.db.removeSync(apiKey(id));
      this.db.removeSync(keysOfEmail(email));
      return ids;
    });
  }

  async ping(): Promise<void> {
    this.db.get("ping");
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** Codes nobody verified would otherwise stay forever; Redis expires them by TTL. */
  private sweepExpiredCodes(): void {
    const now = this.now();
    this.db.transactionSync(() => {
      for (const { key, value } of this.db.getRange({ start: "code:", end: "code;" })) {
        if ((value as StoredCode).expiresAt < now) this.db.removeSync(key);
      }
    });
  }
}
