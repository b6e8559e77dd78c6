import { z } from "zod";

const EMAIL = z.email();
const MAX_LENGTH = 254;

/** Lower-cased, trimmed address, or undefined when it is not a valid address. */
export function normalizeEmail(input: string): string | undefined {
  const email = input.trim().toLowerCase();
  if (email.length > MAX_LENGTH || !EMAIL.safeParse(email).success) return undefined;
  return email;
}

/** "jane.doe@example.com" → "j*******@example.com". */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at);
  return `${local[0]}${"*".repeat(Math.max(local.length - 1, 3))}${email.slice(at)}`;
}
