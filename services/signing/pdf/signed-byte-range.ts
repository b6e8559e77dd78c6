/**
 * What a signature's /ByteRange covers: the bytes it signs, checked to start
 * the file and to leave out exactly the /Contents hex string of the same
 * dictionary, and the revision it ends.
 */
import { SignatureProblem } from "../verification/signature-problem.js";
import type { SignatureEntry } from "./signature-dictionaries.js";

/** Checks the /ByteRange is sane and returns the /Contents bytes and the covered bytes. */
export function signedByteRange(pdf: Buffer, entry: SignatureEntry): { contents: Buffer; signedBytes: Buffer } {
  const [a, b, c, d] = entry.byteRange as [number, number, number, number];
  if (a !== 0) throw new SignatureProblem("its /ByteRange does not start at the beginning of the file");
  if (b <= 0 || c <= b || d < 0 || c + d > pdf.length) {
    throw new SignatureProblem("its /ByteRange lies outside the file or is malformed");
  }
  const gap = pdf.subarray(b, c).toString("latin1");
  if (!/^<[0-9a-fA-F]*>$/.test(gap) || gap.length % 2 !== 0) {
    throw new SignatureProblem("the bytes its /ByteRange leaves out are not exactly the /Contents hex string");
  }
  // the hole must be the value of a /Contents key...
  const before = pdf.subarray(Math.max(0, b - 64), b).toString("latin1");
  if (!/\/Contents\s*$/.test(before)) {
    throw new SignatureProblem("the bytes its /ByteRange leaves out are not the /Contents of a signature dictionary");
  }
  // ...of the same object as the /ByteRange
  if (entry.rawOffset >= 0) {
    const between = entry.rawOffset < b ? pdf.subarray(entry.rawOffset, b) : pdf.subarray(c, entry.rawOffset);
    if (between.includes("endobj") || between.includes("/ByteRange", 1)) {
      throw new SignatureProblem("its /Contents and /ByteRange are not in the same signature dictionary");
    }
  }
  return {
    contents: Buffer.from(gap.slice(1, -1), "hex"),
    signedBytes: Buffer.concat([pdf.subarray(a, a + b), pdf.subarray(c, c + d)]),
  };
}

/** 1 + the number of "%%EOF" markers before `offset` that end earlier revisions. */
export function revisionEndingAt(pdf: Buffer, offset: number): number {
  let revision = 1;
  for (let at = pdf.indexOf("%%EOF"); at >= 0 && at + 5 < offset - 2; at = pdf.indexOf("%%EOF", at + 5)) revision++;
  return revision;
}
