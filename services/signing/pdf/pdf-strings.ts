/**
 * PDF string syntax read straight from raw bytes, for the signature
 * dictionaries pdf-lib no longer sees (those of earlier revisions): literal
 * and hex strings, text strings, names with #xx escapes, and dates.
 */

/** The bytes of the literal string `( ... )` starting at `start` (balanced parentheses, escapes). */
export function literalStringBytes(text: string, start: number): Buffer {
  const out: number[] = [];
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      const next = text[++i] ?? "";
      const escapes: Record<string, number> = { n: 10, r: 13, t: 9, b: 8, f: 12, "(": 40, ")": 41, "\\": 92 };
      if (next in escapes) out.push(escapes[next]!);
      else if (/[0-7]/.test(next)) {
        const octal = /^[0-7]{1,3}/.exec(text.slice(i, i + 3))![0];
        out.push(parseInt(octal, 8) & 0xff);
        i += octal.length - 1;
      } else if (next === "\r") {
        if (text[i + 1] === "\n") i++;
      } else if (next !== "\n") out.push(next.charCodeAt(0));
      continue;
    }
    if (c === "(") {
      if (depth++ === 0) continue;
    } else if (c === ")") {
      if (--depth === 0) break;
    }
    out.push(c.charCodeAt(0) & 0xff);
  }
  return Buffer.from(out);
}

/** The bytes of the hex string `< ... >` starting at `start` (an odd last digit is followed by 0); undefined when unterminated. */
export function hexStringBytes(text: string, start: number): Buffer | undefined {
  const close = text.indexOf(">", start);
  if (close < 0) return undefined;
  const hex = text.slice(start + 1, close).replace(/\s/g, "");
  return Buffer.from(hex.length % 2 ? `${hex}0` : hex, "hex");
}

/** A text string: UTF-16BE or UTF-8 with their byte order marks, else PDFDocEncoding. */
export function decodePdfText(bytes: Buffer): string {
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    const body = bytes.subarray(2, 2 + ((bytes.length - 2) & ~1));
    return Buffer.from(body).swap16().toString("utf16le");
  }
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return bytes.subarray(3).toString("utf8");
  return bytes.toString("latin1"); // PDFDocEncoding, close enough for names
}

export function decodeName(name: string): string {
  return name.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** "D:YYYYMMDDHHmmSSOHH'mm'" to ISO 8601 UTC; "" when unreadable. */
export function pdfDateToIso(value: string): string {
  const match = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+-])(?:(\d{2})'?(\d{2})?'?)?)?/.exec(value.trim());
  if (!match) return "";
  const [, year, month = "01", day = "01", hour = "00", minute = "00", second = "00", sign, offsetHours = "00", offsetMinutes = "00"] = match;
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  const offset = (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  const time = sign === "+" ? utc - offset : sign === "-" ? utc + offset : utc;
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}
