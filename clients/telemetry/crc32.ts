/** CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum ZIP and the reference client use. */

let table: Uint32Array | undefined;

function crcTable(): Uint32Array {
  if (table) return table;
  table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
}

/** The CRC-32 of `bytes` as an unsigned 32-bit integer. */
export function crc32(bytes: Uint8Array): number {
  const t = crcTable();
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = t[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The CRC-32 of `bytes` as 8 uppercase hex digits, zero-padded ("123456789" → "CBF43926"). */
export function crc32Hex(bytes: Uint8Array): string {
  return crc32(bytes).toString(16).toUpperCase().padStart(8, "0");
}
