import { open, type RootDatabase } from "lmdb";
import type { Claim, SignatureLedger } from "./signature-ledger.js";

interface Entry {
  hash: string;
  /** Absent while the claim is pending. */
  document?: Buffer;
  expiresAt: number;
}

const entryKey = (scope: string, eventId: string) => `${scope}:${eventId}`;

/**
 * The embedded-mode ledger: an LMDB database in the data directory, so replays
 * survive a restart. Each method is one synchronous transaction (atomic within
 * the process); expired entries are swept at start and ignored when read.
 */
export class EmbeddedSignatureLedger implements SignatureLedger {
  private readonly db: RootDatabase<Entry, string>;

  constructor(path: string, private readonly now: () => number = Date.now) {
    this.db = open<Entry, string>({ path, compression: true });
    this.sweep();
  }

  async claim(scope: string, eventId: string, requestHash: string, pendingMs: number): Promise<Claim> {
    const key = entryKey(scope, eventId);
    return this.db.transactionSync((): Claim => {
      const entry = this.live(key);
      if (!entry) {
        this.db.putSync(key, { hash: requestHash, expiresAt: this.now() + pendingMs });
        return { kind: "claimed" };
      }
      if (entry.hash !== requestHash) return { kind: "conflict" };
      return entry.document ? { kind: "replay", document: Buffer.from(entry.document) } : { kind: "in-progress" };
    });
  }

  async complete(scope: string, eventId: string, requestHash: string, document: Buffer, ttlMs: number): Promise<void> {
    await this.db.put(entryKey(scope, eventId), { hash: requestHash, document, expiresAt: this.now() + ttlMs });
  }

  async release(scope: string, eventId: string, requestHash: string): Promise<void> {
    const key = entryKey(scope, eventId);
    this.db.transactionSync(() => {
      const entry = this.db.get(key);
      if (entry && entry.hash === requestHash && !entry.document) this.db.removeSync(key);
    });
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  private live(key: string): Entry | undefined {
    const entry = this.db.get(key);
    return entry && entry.expiresAt > this.now() ? entry : undefined;
  }

  private sweep(): void {
    const now = this.now();
    for (const { key, value } of this.db.getRange()) {
      if (value.expiresAt <= now) void this.db.remove(key);
    }
  }
}
