/**
 * The bytes of a PDF being signed, grown in place as revisions are appended:
 * every revision (the signature, the DSS, a document timestamp) is appended
 * after the document received, never into a new copy of the file.
 *
 * A document handed over in a resizable ArrayBuffer of its own (the gateway
 * decodes an upload into one, and a worker thread owns what its task brings)
 * is not copied at all: the revisions are appended in that ArrayBuffer
 * ({@link PdfOutput.appendingTo}). Any other document is copied once, into a
 * buffer with room for what signing adds. Copying a 30 MB file costs more
 * than the copy: it is a new 30 MB buffer per signing, which V8 answers with a
 * full garbage collection of the thread's heap, run while the signing awaits
 * the TSA or a responder.
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

/** ES2024's resizable ArrayBuffer: Node 24 has it, the project's TypeScript lib (ES2023) does not. */
interface ResizableArrayBuffer extends ArrayBuffer {
  readonly resizable: boolean;
  readonly maxByteLength: number;
  resize(byteLength: number): void;
}

/** `bytes` fill a resizable ArrayBuffer of their own, which can grow after them. */
function growableBufferOf(bytes: Uint8Array): ResizableArrayBuffer | undefined {
  const buffer = bytes.buffer as ResizableArrayBuffer;
  const whole = bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength;
  return buffer instanceof ArrayBuffer && buffer.resizable === true && whole ? buffer : undefined;
}

export class PdfOutput {
  private buffer: Buffer;
  private used: number;
  /** Set while revisions are appended in the document's own resizable ArrayBuffer (under `buffer`, as long as it). */
  private growable: ResizableArrayBuffer | undefined;
  private readonly hash: Hash = createHash("sha256");
  private hashed = 0;

  /** `document` copied into a buffer with `headroom` bytes of room (`inPlace`: see {@link appendingTo}). */
  constructor(document: Uint8Array, headroom = headroomFor(document.byteLength), inPlace = false) {
    this.growable = inPlace ? growableBufferOf(document) : undefined;
    if (this.growable) {
      this.buffer = Buffer.from(this.growable, 0, this.growable.byteLength);
    } else {
      this.buffer = Buffer.allocUnsafe(document.byteLength + headroom);
      this.buffer.set(document);
    }
    this.used = document.byteLength;
  }

  /**
   * An output that appends where `document` is, without copying it, when
   * `document` fills a resizable ArrayBuffer of its own; otherwise a copy,
   * like the constructor. The ArrayBuffer then belongs to the output: the
   * caller hands it over, and must not append to it otherwise (another
   * signing of the same bytes would write over this one's revisions).
   * `document`'s own bytes are never written, so a view of them stays the
   * document received. The result ({@link bytes}) fills the ArrayBuffer, so it
   * moves to another thread without a copy. When the ArrayBuffer cannot grow
   * far enough (its maxByteLength), the bytes are copied out then.
   */
  static appendingTo(document: Uint8Array): PdfOutput {
    return new PdfOutput(document, undefined, true);
  }

  get length(): number {
    return this.used;
  }

  /** A view of the bytes so far (valid until the next {@link append}; appended in place, for as long as the ArrayBuffer is not shrunk). */
  get bytes(): Buffer {
    return this.buffer.subarray(0, this.used);
  }

  /** Appends `chunk`; its offset in the file. */
  append(chunk: Buffer): number {
    const needed = this.used + chunk.length;
    if (this.growable && needed <= this.growable.maxByteLength) {
      // in place, to the byte: the result fills its ArrayBuffer
      this.growable.resize(needed);
      this.buffer = Buffer.from(this.growable, 0, needed);
    } else if (needed > this.buffer.length) {
      const grown = Buffer.allocUnsafe(needed + headroomFor(this.used));
      this.buffer.copy(grown, 0, 0, this.used);
      this.buffer = grown;
      this.growable = undefined;
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
