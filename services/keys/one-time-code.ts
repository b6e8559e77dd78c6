import { createHmac, randomInt, timingSafeEqual } from "node:crypto";

export const CODE_PATTERN = /^\d{6}$/;

/** A 6-digit code from the CSPRNG. */
export function generateCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, "0");
}

/**
 * Codes are stored as an HMAC under a secret pepper kept outside the store:
 * a plain hash of a 6-digit code would fall to a million guesses offline.
 */
export function hashCode(pepper: string, email: string, code: string): string {
  return createHmac("sha256", pepper).update(`${email}\n${code}`).digest("hex");
}

export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}
