import { createHash, timingSafeEqual } from "node:crypto";

/** Compares secrets of any length without leaking, through timing, how much of them matched. */
export function constantTimeEquals(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
