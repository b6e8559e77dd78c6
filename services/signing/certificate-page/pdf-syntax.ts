// Codes as written into the certificate page's PDF objects.

/** A 16-bit code as four hex digits (CIDs, UTF-16 units). */
export function hex4(value: number): string {
  return value.toString(16).padStart(4, "0");
}

/**
 * A coordinate, size or color component in content-stream syntax: rounded to
 * thousandths (far below any device's resolution), so never in exponent notation
 * for the page sizes a certificate page can have.
 */
export function pdfNumber(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}
