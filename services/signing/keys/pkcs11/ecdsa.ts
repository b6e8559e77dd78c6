/**
 * PKCS#11's CKM_ECDSA returns the signature as r || s, two big-endian
 * integers of the curve's size; CMS and X.509 want the DER
 * `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }` (RFC 3279 2.2.3).
 */
export function ecdsaRawToDer(raw: Buffer): Buffer {
  if (raw.length === 0 || raw.length % 2 !== 0) {
    throw new Error(`ECDSA signature: expected r || s of even length, got ${raw.length} bytes`);
  }
  const half = raw.length / 2;
  const body = Buffer.concat([derInteger(raw.subarray(0, half)), derInteger(raw.subarray(half))]);
  return Buffer.concat([Buffer.from([0x30]), derLength(body.length), body]);
}

/** A non-negative INTEGER, minimally encoded, from its big-endian magnitude. */
function derInteger(magnitude: Buffer): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  let content = magnitude.subarray(start);
  if (content[0]! & 0x80) content = Buffer.concat([Buffer.from([0]), content]);
  return Buffer.concat([Buffer.from([0x02]), derLength(content.length), content]);
}

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  if (length <= 0xff) return Buffer.from([0x81, length]);
  return Buffer.from([0x82, length >> 8, length & 0xff]);
}
