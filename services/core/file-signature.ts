/** What a file is, from its first bytes. */

const ZIP = Buffer.from("PK\x03\x04", "latin1");

/** PDF readers accept the `%PDF-` header anywhere in the first 1024 bytes. */
export function isPdf(bytes: Buffer): boolean {
  return bytes.subarray(0, 1024).includes("%PDF-");
}

/** A ZIP package (DOCX, ODT, …): a local file header first. */
export function isZip(bytes: Buffer): boolean {
  return bytes.subarray(0, ZIP.length).equals(ZIP);
}
