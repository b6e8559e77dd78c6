// Codes as written into the certificate page's PDF objects.

/** A 16-bit code as four hex digits (CIDs, UTF-16 units). */
export function hex4(value: number): string {
  return value.toString(16).padStart(4, "0");
}
