import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { open, type RootDatabase } from "lmdb";
import { writeAtomically } from "../../core/atomic-file.js";
import type { Claim, SignatureLedger } from "./signature-ledger.js";

interface Entry {
  hash: string;
  expiresAt: number;
  /** The signed document is in its file. Absent while the claim is pending. */
  signed?: true;
  /** Where earlier versions kept the signed document; moved to its file when the ledger opens. */
  document?: Uint8Array;
}

const entryKey = (scope: string, eventId: string) => `${scope}:${eventId}`;
/** Entries past their time are removed this often, with their documents. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * The embedded-mode ledger, in the data directory so that replays survive a
 * restart: the claims in an LMDB database (each method one synchronous
 * transaction, atomic within the process), each signed document in a file of
 * its own. A document is not an LMDB value: reading one maps it into the
 * process and copies it out, so a replayed 30 MB PDF would be resident twice,
 * and storing it would pass it through msgpack and compression, which gain
 * nothing on a PDF's already compressed streams.
 */
export class EmbeddedSignatureLedger implements SignatureLedger {
  private readonly db: RootDatabase<Entry, string>;
  private readonly documents: string;
  private readonly sweeper: NodeJS.Timeout;

  constructor(path: string, private readonly now: () => number = Date.now) {
    this.db = open<Entry, string>({ path, compression: true });
    this.documents = join(path, "documents");
    mkdirSync(this.documents, { recursive: true });
    this.sweep(true);
    this.sweeper = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
  }

  async claim(scope: string, eventId: string, requestHash: string, pendingMs: number): Promise<Claim> {
    const key = entryKey(scope, eventId);
    const claim = this.db.transactionSync((): Claim | "replay" => {
      const entry = this.live(key);
      // a signed entry whose document is gone (removed by hand) is signed again
      if (!entry || (entry.signed && !existsSync(this.documentFile(key)))) {
        this.db.putSync(key, { hash: requestHash, expiresAt: this.now() + pendingMs });
        return { kind: "claimed" };
      }
      if (entry.hash !== requestHash) return { kind: "conflict" };
      return entry.signed ? "replay" : { kind: "in-progress" };
    });
    return claim === "replay" ? { kind: "replay", document: await readFile(this.documentFile(key)) } : claim;
  }

  async complete(scope: string, eventId: string, requestHash: string, document: Buffer, ttlMs: number): Promise<void> {
    const key = entryKey(scope, eventId);
    await writeAtomically(this.documentFile(key), document);
    await this.db.put(key, { hash: requestHash, expiresAt: this.now() + ttlMs, signed: true });
  }

  async release(scope: string, eventId: string, requestHash: string): Promise<void> {
    const key = entryKey(scope, eventId);
    this.db.transactionSync(() => {
      const entry = this.db.get(key);
      if (entry && entry.hash === requestHash && !entry.signed) this.db.removeSync(key);
    });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.db.close();
  }

  private live(key: string): Entry | undefined {
    const entry = this.db.get(key);
    return entry && entry.expiresAt > this.now() ? entry : undefined;
  }

  private documentFile(key: string): string {
    return join(this.documents, `${createHash("sha256").update(key).digest("hex")}.pdf`);
  }

  /**
   * Removes entries past their time with their documents, and moves documents
   * kept the earlier way to their files. At start, also removes files that no
   * entry names: a document whose entry was never written (the process stopped
   * in between) or a partial one.
   */
  private sweep(atStart = false): void {
    const now = this.now();
    const named = new Set<string>();
    const expired: string[] = [];
    this.db.transactionSync(() => {
      for (const { key, value } of this.db.getRange()) {
        const file = this.documentFile(key);
        if (value.expiresAt <= now) {
          this.db.removeSync(key);
          expired.push(file);
          continue;
        }
        if (value.document) {
          writeFileSync(file, value.document);
          this.db.putSync(key, { hash: value.hash, expiresAt: value.expiresAt, signed: true });
        }
        named.add(file);
      }
    });
    for (const file of expired) rmSync(file, { force: true });
    if (!atStart) return;
    for (const name of readdirSync(this.documents)) {
      const file = join(this.documents, name);
      if (!named.has(file)) rmSync(file, { force: true });
    }
  }
}
