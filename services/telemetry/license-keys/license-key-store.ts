export interface LicenseKeyInfo {
  licenseKey: string;
  /** Who it is for (free text from the admin). */
  customer: string;
  createdAt: Date;
}

/** License keys that may report usage (besides the community key, always accepted). */
export interface LicenseKeyStore {
  /** Adds a key; adding an existing key keeps it and returns it unchanged. */
  add(licenseKey: string, customer: string): Promise<LicenseKeyInfo>;
  /** Removes a key; true when it existed. */
  remove(licenseKey: string): Promise<boolean>;
  find(licenseKey: string): Promise<LicenseKeyInfo | undefined>;
  list(): Promise<LicenseKeyInfo[]>;
  close(): Promise<void>;
}
