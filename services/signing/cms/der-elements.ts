// Encoded elements as received, as sub-arrays of the input: what a signature
// covers (a TBSCertificate, a CRL's tbsCertList, an OCSP tbsResponseData) and
// what an OCSP CertID hashes (the issuer's Name) are these bytes, not a
// re-encoding. forge's parsed nodes keep no offsets, and re-encoding them would
// normalise BER input, hence this small walker over tags and definite lengths.

/** The encodings of the components of the constructed element at the start of `der`. */
export function derChildren(der: Buffer, what: string): Buffer[] {
  const parent = derElement(der, 0, der.length, what);
  if ((der[0]! & 0x20) === 0) throw new Error(`${what}: expected a constructed ASN.1 value`);
  const items: Buffer[] = [];
  for (let offset = parent.contents; offset < parent.end; ) {
    const end = derElement(der, offset, parent.end, what).end;
    items.push(der.subarray(offset, end));
    offset = end;
  }
  return items;
}

/** The element at the start of `der` as encoded, without what follows it. */
export function firstDerElement(der: Buffer, what: string): Buffer {
  return der.subarray(0, derElement(der, 0, der.length, what).end);
}

/** Where the contents of the element at `offset` start and where it ends (definite lengths only). */
function derElement(der: Buffer, offset: number, limit: number, what: string): { contents: number; end: number } {
  let position = offset + 1;
  // high tag number form: the number follows in base 128, the last byte without bit 8
  if ((der[offset]! & 0x1f) === 0x1f) {
    while (position < limit && der[position]! & 0x80) position++;
    position++;
  }
  const first = der[position++];
  let length = first ?? 0;
  if (first !== undefined && first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4 || position + count > limit) throw new Error(`${what}: unsupported or truncated length`);
    length = der.readUIntBE(position, count);
    position += count;
  }
  if (first === undefined || position + length > limit) throw new Error(`${what}: truncated ASN.1 value`);
  return { contents: position, end: position + length };
}
