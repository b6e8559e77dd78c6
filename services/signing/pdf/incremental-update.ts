/**
 * An incremental update (ISO 32000-1, 7.5.6): new and changed objects, a
 * cross-reference section for them with /Prev pointing at the previous one,
 * and a trailer, appended after the document's last byte. The bytes before
 * stay identical, so signatures over them stay valid.
 *
 * The section is a classic table, or a cross-reference stream when the
 * previous section is one (a file that uses streams must keep using them).
 */
import { createHash, randomUUID } from "node:crypto";
import { PDFArray, PDFDict, PDFHexString, PDFInvalidObject, PDFName, PDFNumber, PDFRawStream, PDFRef, type PDFObject } from "pdf-lib";
import type { PdfFile } from "./pdf-file.js";

export class IncrementalUpdate {
  private readonly changed = new Map<number, { object: PDFObject; generation: number }>();
  private nextNumber: number;
  private readonly trailerOverrides = new Map<string, PDFObject>();

  constructor(readonly file: PdfFile) {
    this.nextNumber = file.size;
  }

  /** A new object; its reference. */
  add(object: PDFObject): PDFRef {
    const ref = PDFRef.of(this.nextNumber++);
    this.changed.set(ref.objectNumber, { object, generation: 0 });
    return ref;
  }

  /** Replaces object `ref` (changed copies of existing objects go here). */
  set(ref: PDFRef, object: PDFObject): void {
    this.changed.set(ref.objectNumber, { object, generation: ref.generationNumber });
  }

  /** The number the next {@link add} takes. */
  get nextObjectNumber(): number {
    return this.nextNumber;
  }

  /** Numbers below `number` are taken (by objects created elsewhere and {@link set} here). */
  skipTo(number: number): void {
    this.nextNumber = Math.max(this.nextNumber, number);
  }

  /** The object this update writes as `ref`, if any. */
  changedObject(ref: PDFRef): PDFObject | undefined {
    return this.changed.get(ref.objectNumber)?.object;
  }

  /** A trailer entry that differs from the file's (a new /Info). */
  setTrailer(key: string, value: PDFObject): void {
    this.trailerOverrides.set(key, value);
  }

  /** The update's bytes (to append to `file.bytes`), and where each object starts in them. */
  serialize(): { bytes: Buffer; offsets: Map<number, number> } {
    const base = this.file.bytes.length;
    const chunks: Buffer[] = [];
    let length = 0;
    const push = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
    };
    // a file that does not end with an end-of-line gets one, so "N 0 obj" starts a line
    const last = this.file.bytes[base - 1];
    if (last !== 0x0a && last !== 0x0d) push(Buffer.from("\n"));

    const offsets = new Map<number, number>();
    for (const number of [...this.changed.keys()].sort((a, b) => a - b)) {
      const { object, generation } = this.changed.get(number)!;
      offsets.set(number, length);
      push(Buffer.from(`${number} ${generation} obj\n`, "latin1"));
      push(serializeObject(object));
      push(Buffer.from("\nendobj\n", "latin1"));
    }
    const xrefOffset = base + length;
    const entries = new Map<number, { offset: number; generation: number }>();
    if (this.file.rebuilt) for (const [number, entry] of this.file.objectOffsets()) entries.set(number, entry);
    for (const [number, offset] of offsets) entries.set(number, { offset: base + offset, generation: this.changed.get(number)!.generation });
    const size = Math.max(this.nextNumber, this.file.size);
    const trailer = this.trailer(size);
    if (this.file.lastXrefIsStream) {
      push(this.xrefStream(entries, trailer, xrefOffset, size));
    } else {
      push(Buffer.from(xrefTable(entries, this.file.rebuilt), "latin1"));
      push(Buffer.from("trailer\n", "latin1"));
      push(serializeObject(trailer));
      push(Buffer.from("\n", "latin1"));
    }
    push(Buffer.from(`startxref\n${xrefOffset}\n%%EOF\n`, "latin1"));
    return { bytes: Buffer.concat(chunks, length), offsets };
  }

  private trailer(size: number): PDFDict {
    const { file } = this;
    const trailer = PDFDict.withContext(file.context);
    trailer.set(PDFName.of("Size"), PDFNumber.of(size));
    for (const key of ["Root", "Info", "Encrypt"]) {
      const value = this.trailerOverrides.get(key) ?? file.trailer.get(PDFName.of(key));
      if (value) trailer.set(PDFName.of(key), value);
    }
    if (!file.rebuilt) trailer.set(PDFName.of("Prev"), PDFNumber.of(file.lastXrefOffset));
    trailer.set(PDFName.of("ID"), this.documentId());
    return trailer;
  }

  /** The first ID stays (the document's identity); the second changes with every revision. */
  private documentId(): PDFArray {
    const existing = this.file.resolveArray(this.file.trailer.get(PDFName.of("ID")));
    // randomUUID draws from a pool of random bytes; randomBytes asks the system on every call
    const first = existing?.get(0) ?? PDFHexString.of(randomUUID().replaceAll("-", ""));
    const revision = createHash("md5").update(String(this.file.bytes.length)).update(randomUUID()).digest("hex");
    return this.file.context.obj([first, PDFHexString.of(revision)]);
  }

  /** An uncompressed cross-reference stream (W [1 4 2]) that is also the trailer. */
  private xrefStream(entries: Map<number, { offset: number; generation: number }>, trailer: PDFDict, xrefOffset: number, size: number): Buffer {
    const streamNumber = size;
    entries.set(streamNumber, { offset: xrefOffset, generation: 0 });
    const numbers = [...entries.keys()].sort((a, b) => a - b);
    const rows = Buffer.alloc(numbers.length * 7);
    numbers.forEach((number, i) => {
      rows.writeUInt8(1, i * 7);
      rows.writeUInt32BE(entries.get(number)!.offset, i * 7 + 1);
      rows.writeUInt16BE(entries.get(number)!.generation, i * 7 + 5);
    });
    const dict = trailer;
    dict.set(PDFName.of("Type"), PDFName.of("XRef"));
    dict.set(PDFName.of("Size"), PDFNumber.of(size + 1));
    dict.set(PDFName.of("W"), this.file.context.obj([1, 4, 2]));
    dict.set(PDFName.of("Index"), this.file.context.obj(subsections(numbers).flatMap(([first, count]) => [first, count])));
    dict.set(PDFName.of("Length"), PDFNumber.of(rows.length));
    const stream = PDFRawStream.of(dict, rows);
    return Buffer.concat([Buffer.from(`${streamNumber} 0 obj\n`, "latin1"), serializeObject(stream), Buffer.from("\nendobj\n", "latin1")]);
  }
}

const rawBytes = new WeakMap<PDFInvalidObject, Uint8Array>();

/** An object written as `bytes` are: PDF syntax serialized elsewhere (a signature dictionary with its placeholder). */
export function rawObject(bytes: Uint8Array): PDFInvalidObject {
  const object = PDFInvalidObject.of(bytes);
  rawBytes.set(object, bytes);
  return object;
}

export function serializeObject(object: PDFObject): Buffer {
  if (object instanceof PDFRawStream) return serializeStream(object);
  const raw = object instanceof PDFInvalidObject ? rawBytes.get(object) : undefined;
  if (raw) return Buffer.from(raw.buffer, raw.byteOffset, raw.length);
  const bytes = Buffer.allocUnsafe(object.sizeInBytes());
  object.copyBytesInto(bytes, 0);
  return bytes;
}

/**
 * A stream's bytes, its contents copied natively: pdf-lib copies stream contents
 * and raw objects one byte at a time in JavaScript, which made the fonts of the
 * certificate page and the signature placeholder the costliest objects of a
 * small document's update.
 */
function serializeStream(stream: PDFRawStream): Buffer {
  stream.dict.set(PDFName.of("Length"), PDFNumber.of(stream.contents.length));
  const dict = serializeObject(stream.dict);
  const bytes = Buffer.allocUnsafe(dict.length + STREAM_START.length + stream.contents.length + STREAM_END.length);
  let offset = dict.copy(bytes, 0);
  offset += STREAM_START.copy(bytes, offset);
  bytes.set(stream.contents, offset);
  STREAM_END.copy(bytes, offset + stream.contents.length);
  return bytes;
}

const STREAM_START = Buffer.from("\nstream\n", "latin1");
const STREAM_END = Buffer.from("\nendstream", "latin1");

/** Runs of consecutive object numbers: [first, count]. */
function subsections(numbers: number[]): [number, number][] {
  const runs: [number, number][] = [];
  for (const number of numbers) {
    const run = runs.at(-1);
    if (run && run[0] + run[1] === number) run[1]++;
    else runs.push([number, 1]);
  }
  return runs;
}

function xrefTable(entries: Map<number, { offset: number; generation: number }>, withFreeHead: boolean): string {
  const numbers = [...entries.keys()].sort((a, b) => a - b);
  let text = "xref\n";
  if (withFreeHead) text += "0 1\n0000000000 65535 f\r\n";
  for (const [first, count] of subsections(numbers)) {
    text += `${first} ${count}\n`;
    for (let number = first; number < first + count; number++) {
      const { offset, generation } = entries.get(number)!;
      text += `${String(offset).padStart(10, "0")} ${String(generation).padStart(5, "0")} n\r\n`;
    }
  }
  return text;
}
