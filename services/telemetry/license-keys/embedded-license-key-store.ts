import { open, type RootDatabase } from "lmdb";
import type { LicenseKeyInfo, LicenseKeyStore } from "./license-key-store.js";

interface Stored {
  customer: string;
  createdAt: number;
}

const licenseKey = (key: string) => `license:${key}`;
const PREFIX_LENGTH = licenseKey("").length;

const info = (key: string, stored: Stored): LicenseKeyInfo => ({ licenseKey: key, customer: stored.customer, createdAt: new Date(stored.createdAt) });

/** The embedded-mode license keys: an LMDB database in the data directory. */
export class EmbeddedLicenseKeyStore implements LicenseKeyStore {
  private readonly db: RootDatabase<Stored, string>;

  constructor(path: string, private readonly now: () => number = Date.now) {
    this.db = open<Stored, string>({ path, compression: false });
  }

  async add(key: string, customer: string): Promise<LicenseKeyInfo> {
    return this.db.transactionSync(() => {
      let stored = this.db.get(licenseKey(key));
      if (!stored) {
        stored = { customer, createdAt: this.now() };
        this.db.putSync(licenseKey(key), stored);
      }
      return info(key, stored);
    });
  }

  async remove(key: string): Promise<boolean> {
    return this.db.transactionSync(() => this.db.removeSync(licenseKey(key)));
  }

  async find(key: string): Promise<LicenseKeyInfo | undefined> {
    const stored = this.db.get(licenseKey(key));
    return stored && info(key, stored);
  }

  /** By license key (LMDB's key order). */
  async list(): Promise<LicenseKeyInfo[]> {
    return [...this.db.getRange({ start: "license:", end: "license;" })].map(({ key, value }) => info(key.slice(PREFIX_LENGTH), value));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
