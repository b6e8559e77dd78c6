/**
 * The bytes of a PDF being signed, grown in place as revisions are appended:
 * the document received is copied once, into a buffer with room for what
 * signing adds, and every later revision (the signature, the DSS, a document
 * timestamp) is appended there instead of into a new copy of the file.
 *
 * It also keeps a SHA-256 state over the bytes that can no longer change, so
 * each signature's digest hashes only what was appended since the last one:
 * signing at B-LTA reads the document once, not once per revision.
 */
import { createHash, type Hash } from "node:crypto";

/**
 * Room left for what signing appends: a signature, a DSS and a document
 * timestamp take 20–60 KB, a certificate page with its fonts up to several
 * hundred. A large document gets enough never to be copied twice; a small
 * one is cheap to copy again when it runs out.
 */
const headroomFor = (length: number) => Math.max(64 * 1024, Math.min(1024 * 1024, length >> 4));

export class PdfOutput {
  private buffer: Buffer;
  private used: number;
  private readonly hash: Hash = createHash("sha256");
  private hashed = 0;

  constructor(document: Buffer, headroom = headroomFor(document.length)) {
    this.buffer = Buffer.allocUnsafe(document.length + headroom);
    document.copy(this.buffer);
    this.used = document.length;
  }

  get length(): number {
    return this.used;
  }

  /** A view of the bytes so far (valid until the next {@link append}). */
  get bytes(): Buffer {
    return this.buffer.subarray(0, this.used);
  }

  /** Appends `chunk`; its offset in the file. */
  append(chunk: Buffer): number {
    if (this.used + chunk.length > this.buffer.length) {
      const grown = Buffer.allocUnsafe(this.used + chunk.length + headroomFor(this.used));
      this.buffer.copy(grown, 0, 0, this.used);
      this.buffer = grown;
    }
    const offset = this.used;
    chunk.copy(this.buffer, offset);
    this.used += chunk.length;
    return offset;
  }

  /** Writes `text` (latin1) over the bytes at `offset`, which must not be hashed yet. */
  patch(offset: number, text: string): void {
    if (offset < this.hashed) throw new Error("PdfOutput: patching bytes that are already hashed");
    this.buffer.write(text, offset, "latin1");
  }

  /**
   * SHA-256 of the file without the bytes [holeStart, holeEnd), a signature's
   * /ByteRange; what comes before the hole is final from now on.
   */
  digestAround(holeStart: number, holeEnd: number): Buffer {
    this.advance(holeStart);
    return this.hash.copy().update(this.buffer.subarray(holeEnd, this.used)).digest();
  }

  /** Everything is final up to `offset`: the hash state takes it in. */
  private advance(offset: number): void {
    if (offset < this.hashed) throw new Error("PdfOutput: a digest over bytes that changed after an earlier one");
    this.hash.update(this.buffer.subarray(this.hashed, offset));
    this.hashed = offset;
  }
}
