import { createHash, randomBytes } from "node:crypto";
import CRC32 from "crc-32";

/**
 * API key format: "dsk_" + 32 base62 random characters + 6 base62 characters of
 * the CRC-32 of everything before them. The checksum lets a secret scanner
 * recognise a key offline, and lets us reject typos without a store lookup.
 */
export const API_KEY_PREFIX = "dsk_";
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);
const DISPLAY_LENGTH = API_KEY_PREFIX.length + 6;

/** Uniform base62 characters: bytes of 248 and above are dropped so `% 62` has no bias. */
function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function checksum(body: string): string {
  let value = CRC32.str(body) >>> 0;
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function generateApiKey(): string {
  const body = API_KEY_PREFIX + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

/** True when the text has the shape of a key and its checksum matches. */
export function isWellFormedApiKey(text: string): boolean {
  if (!SHAPE.test(text)) return false;
  const body = text.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === text.slice(-CHECKSUM_LENGTH);
}

/** The identifier a key is stored under: hex SHA-256 of the key. */
export function keyIdOf(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

export function displayPrefixOf(apiKey: string): string {
  return apiKey.slice(0, DISPLAY_LENGTH);
}
