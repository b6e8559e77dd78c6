/** A one-time code waiting to be verified. Only its HMAC is kept. */
export interface PendingCode {
  codeHash: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** What is kept about an issued API key: never the key itself. */
export interface ApiKeyRecord {
  /** Hex SHA-256 of the key. */
  keyId: string;
  displayPrefix: string;
  email: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

/**
 * Storage of codes and keys. Redis in production, a local database in
 * embedded mode; both make each method atomic. A store that cannot be reached
 * throws ServiceError UNAVAILABLE.
 */
export interface KeyStore {
  /**
   * Stores the code for the address, replacing any earlier one and its attempt
   * count. `ttlMs` lets the store drop it later by its own clock; whether it has
   * expired is decided by the service's clock and `expiresAt`.
   */
  saveCode(email: string, code: PendingCode, ttlMs: number): Promise<void>;
  /** Counts one verification attempt and returns the code with the attempts made so far, or undefined when there is none. */
  recordAttempt(email: string): Promise<{ code: PendingCode; attempts: number } | undefined>;
  /** Deletes the address's code if it is still the one with this hash; true when this call deleted it. */
  consumeCode(email: string, codeHash: string): Promise<boolean>;
  /** Deletes the address's code, whatever it is. */
  deleteCode(email: string): Promise<void>;
  saveKey(record: ApiKeyRecord): Promise<void>;
  findKey(keyId: string): Promise<ApiKeyRecord | undefined>;
  /** Returns the ids of the keys deleted (0 or 1). */
  deleteKey(keyId: string): Promise<string[]>;
  /** Deletes every key of the address; returns their ids. */
  deleteKeysOf(email: string): Promise<string[]>;
  /** Throws when the store cannot serve requests. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
