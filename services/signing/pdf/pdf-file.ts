/**
 * A PDF read lazily, for appending to it: the cross-reference sections (tables,
 * streams, hybrids, followed through /Prev) are read, and an object is parsed
 * only when asked for. Signing a 300-page document therefore touches the
 * trailer, the catalog, the page-tree path to one page and the form, not the
 * content. Objects are pdf-lib objects (its parser reads one object at a time),
 * so an update can be built and serialised with pdf-lib's object model.
 *
 * A file whose cross-reference data cannot be read is rebuilt by scanning for
 * "N G obj" headers (one pass), as readers do for damaged files.
 */
import { inflateSync } from "node:zlib";
import {
  PDFArray,
  PDFContext,
  PDFDict,
  PDFName,
  PDFNumber,
  PDFObjectParser,
  PDFRawStream,
  PDFRef,
  type PDFObject,
} from "pdf-lib";

type XrefEntry = { kind: "offset"; offset: number; generation: number } | { kind: "compressed"; stream: number; index: number };

export class PdfReadError extends Error {}

export class PdfFile {
  /** pdf-lib context the parsed objects belong to; it holds no document objects itself. */
  readonly context = PDFContext.create();
  trailer!: PDFDict;
  /** Offset of the last cross-reference section (the /Prev of an update). */
  lastXrefOffset = 0;
  /** The last section is a cross-reference stream (an update then writes one too). */
  lastXrefIsStream = false;
  /**
   * The cross-reference data was damaged and rebuilt by a scan: an update
   * then lists every object ({@link objectOffsets}) and has no /Prev.
   */
  rebuilt = false;
  private entries = new Map<number, XrefEntry>();
  private readonly objects = new Map<number, PDFObject | undefined>();
  private readonly objectStreams = new Map<number, { first: number; offsets: Map<number, number>; data: Buffer }>();

  private constructor(readonly bytes: Buffer) {}

  /** Throws {@link PdfReadError} when `bytes` is not a PDF whose structure can be read. */
  static open(bytes: Buffer): PdfFile {
    const file = new PdfFile(bytes);
    try {
      file.readSections();
      // offsets that do not point at their objects show on the first lookups
      file.resolveDict(file.catalog().get(PDFName.of("Pages")));
    } catch {
      file.objects.clear();
      file.objectStreams.clear();
      file.rebuildSections();
    }
    return file;
  }

  /** The trailer's /Size: the first object number an update may use. */
  get size(): number {
    const size = this.trailer.get(PDFName.of("Size"));
    const largest = Math.max(0, ...this.entries.keys());
    return Math.max(size instanceof PDFNumber ? size.asNumber() : 0, largest + 1);
  }

  /** Objects stored at a file offset, by object number (what a rebuilt file's update lists). */
  objectOffsets(): Map<number, { offset: number; generation: number }> {
    const offsets = new Map<number, { offset: number; generation: number }>();
    for (const [number, entry] of this.entries) if (entry.kind === "offset" && entry.offset >= 0) offsets.set(number, entry);
    return offsets;
  }

  /** Numbers of the objects the file defines, each with where its current definition is (an object stream's own offset for a compressed one). */
  definitions(): Map<number, number> {
    const definitions = new Map<number, number>();
    for (const [number, entry] of this.entries) {
      if (entry.kind === "offset") {
        if (entry.offset >= 0) definitions.set(number, entry.offset);
      } else {
        const stream = this.entries.get(entry.stream);
        if (stream?.kind === "offset" && stream.offset >= 0) definitions.set(number, stream.offset);
      }
    }
    return definitions;
  }

  get catalogRef(): PDFRef {
    const root = this.trailer.get(PDFName.of("Root"));
    if (!(root instanceof PDFRef)) throw new PdfReadError("the trailer has no /Root reference");
    return root;
  }

  catalog(): PDFDict {
    const catalog = this.lookup(this.catalogRef);
    if (!(catalog instanceof PDFDict)) throw new PdfReadError("the document catalog is not a dictionary");
    return catalog;
  }

  /** The object `value` is, following a reference; undefined for a free or missing object. */
  resolve(value: PDFObject | undefined): PDFObject | undefined {
    return value instanceof PDFRef ? this.lookup(value) : value;
  }

  resolveDict(value: PDFObject | undefined): PDFDict | undefined {
    const resolved = this.resolve(value);
    return resolved instanceof PDFDict ? resolved : resolved instanceof PDFRawStream ? resolved.dict : undefined;
  }

  resolveArray(value: PDFObject | undefined): PDFArray | undefined {
    const resolved = this.resolve(value);
    return resolved instanceof PDFArray ? resolved : undefined;
  }

  lookup(ref: PDFRef): PDFObject | undefined {
    if (this.objects.has(ref.objectNumber)) return this.objects.get(ref.objectNumber);
    let object: PDFObject | undefined;
    try {
      object = this.parseObject(ref.objectNumber);
    } catch (error) {
      // pdf-lib's parser errors, zlib's: the file is damaged there
      if (error instanceof PdfReadError) throw error;
      throw new PdfReadError(`object ${ref.objectNumber} cannot be read: ${(error as Error).message}`, { cause: error });
    }
    this.objects.set(ref.objectNumber, object);
    return object;
  }

  /** The decoded data of the stream `value` is (FlateDecode or unfiltered). */
  streamData(value: PDFObject | undefined): Buffer | undefined {
    const stream = this.resolve(value);
    return stream instanceof PDFRawStream ? decodeStream(stream, this) : undefined;
  }

  private parseObject(objectNumber: number): PDFObject | undefined {
    const entry = this.entries.get(objectNumber);
    if (!entry || (entry.kind === "offset" && entry.offset < 0)) return undefined;
    if (entry.kind === "offset") return this.parseIndirectAt(entry.offset, objectNumber);
    const stream = this.objectStream(entry.stream);
    const offset = stream.offsets.get(objectNumber);
    if (offset === undefined) return undefined;
    return PDFObjectParser.forBytes(stream.data.subarray(stream.first + offset), this.context).parseObject();
  }

  private parseIndirectAt(offset: number, expected?: number): PDFObject {
    const header = /^\s*(\d+)\s+(\d+)\s+obj\b/.exec(this.bytes.toString("latin1", offset, Math.min(this.bytes.length, offset + 64)));
    if (!header || (expected !== undefined && Number(header[1]) !== expected)) {
      throw new PdfReadError(`no object ${expected ?? ""} at offset ${offset}`);
    }
    const parser = PDFObjectParser.forBytes(this.bytes.subarray(offset + header[0].length), this.context);
    return parser.parseObject();
  }

  private objectStream(objectNumber: number) {
    let stream = this.objectStreams.get(objectNumber);
    if (stream) return stream;
    const object = this.lookup(PDFRef.of(objectNumber));
    if (!(object instanceof PDFRawStream)) throw new PdfReadError(`object stream ${objectNumber} is not a stream`);
    const data = decodeStream(object, this);
    const count = numberOf(object.dict.get(PDFName.of("N")));
    const first = numberOf(object.dict.get(PDFName.of("First")));
    const numbers = data.toString("latin1", 0, first).trim().split(/\s+/).map(Number);
    const offsets = new Map<number, number>();
    for (let i = 0; i < count; i++) offsets.set(numbers[2 * i]!, numbers[2 * i + 1]!);
    stream = { first, offsets, data };
    this.objectStreams.set(objectNumber, stream);
    return stream;
  }

  private readSections(): void {
    const tail = this.bytes.toString("latin1", Math.max(0, this.bytes.length - 2048));
    const match = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(tail) ?? /startxref\s+(\d+)/.exec(tail);
    if (!match) throw new PdfReadError("no startxref");
    const lastXrefOffset = Number(match[1]);
    const entries = (this.entries = new Map<number, XrefEntry>());
    let trailer: PDFDict | undefined;
    let lastXrefIsStream = false;
    const seen = new Set<number>();
    for (let offset: number | undefined = lastXrefOffset; offset !== undefined; ) {
      if (seen.has(offset) || offset >= this.bytes.length) throw new PdfReadError("a cross-reference /Prev loops or points outside the file");
      seen.add(offset);
      const section = this.readSection(offset, entries);
      if (!trailer) {
        trailer = section.trailer;
        lastXrefIsStream = section.isStream;
      }
      const prev = section.trailer.get(PDFName.of("Prev"));
      offset = prev instanceof PDFNumber ? prev.asNumber() : undefined;
    }
    if (!trailer || !(trailer.get(PDFName.of("Root")) instanceof PDFRef)) throw new PdfReadError("no trailer with /Root");
    Object.assign(this, { trailer, lastXrefOffset, lastXrefIsStream });
  }

  /** Reads one section into `entries`, keeping entries of newer sections. */
  private readSection(offset: number, entries: Map<number, XrefEntry>): { trailer: PDFDict; isStream: boolean } {
    const start = this.bytes.toString("latin1", offset, Math.min(this.bytes.length, offset + 4));
    if (start === "xref") {
      const trailer = this.readTable(offset, entries);
      const hybrid = trailer.get(PDFName.of("XRefStm"));
      if (hybrid instanceof PDFNumber) this.readStreamSection(hybrid.asNumber(), entries);
      return { trailer, isStream: false };
    }
    return { trailer: this.readStreamSection(offset, entries), isStream: true };
  }

  private readTable(offset: number, entries: Map<number, XrefEntry>): PDFDict {
    const trailerAt = this.bytes.indexOf("trailer", offset, "latin1");
    if (trailerAt < 0) throw new PdfReadError("a cross-reference table without trailer");
    const lines = this.bytes.toString("latin1", offset + 4, trailerAt).split(/\r\n|\r|\n/);
    let number = 0;
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (fields.length === 2 && fields.every((field) => /^\d+$/.test(field))) {
        number = Number(fields[0]);
      } else if (fields.length === 3 && /^\d{10}$/.test(fields[0]!) && (fields[2] === "n" || fields[2] === "f")) {
        if (!entries.has(number) && fields[2] === "n") entries.set(number, { kind: "offset", offset: Number(fields[0]), generation: Number(fields[1]) });
        if (!entries.has(number) && fields[2] === "f") entries.set(number, { kind: "offset", offset: -1, generation: 0 });
        number++;
      } else if (line.trim() !== "") {
        throw new PdfReadError("a malformed cross-reference table line");
      }
    }
    const trailer = PDFObjectParser.forBytes(this.bytes.subarray(trailerAt + "trailer".length), this.context).parseObject();
    if (!(trailer instanceof PDFDict)) throw new PdfReadError("the trailer is not a dictionary");
    return trailer;
  }

  private readStreamSection(offset: number, entries: Map<number, XrefEntry>): PDFDict {
    const stream = this.parseIndirectAt(offset);
    if (!(stream instanceof PDFRawStream) || stream.dict.get(PDFName.of("Type")) !== PDFName.of("XRef")) {
      throw new PdfReadError("startxref does not point at a cross-reference table or stream");
    }
    const dict = stream.dict;
    const widths = arrayOfNumbers(dict.get(PDFName.of("W")));
    const size = numberOf(dict.get(PDFName.of("Size")));
    const index = dict.has(PDFName.of("Index")) ? arrayOfNumbers(dict.get(PDFName.of("Index"))) : [0, size];
    const data = decodeStream(stream, this);
    const rowLength = widths.reduce((sum, width) => sum + width, 0);
    let row = 0;
    for (let i = 0; i + 1 < index.length; i += 2) {
      for (let number = index[i]!; number < index[i]! + index[i + 1]!; number++, row++) {
        const at = row * rowLength;
        if (at + rowLength > data.length) throw new PdfReadError("a cross-reference stream is shorter than its /Index");
        const field = (n: number, fallback: number) => {
          if (widths[n] === 0) return fallback;
          let value = 0;
          let position = at + widths.slice(0, n).reduce((sum, width) => sum + width, 0);
          for (let k = 0; k < widths[n]!; k++) value = value * 256 + data[position++]!;
          return value;
        };
        if (entries.has(number)) continue;
        const type = field(0, 1);
        if (type === 1) entries.set(number, { kind: "offset", offset: field(1, 0), generation: field(2, 0) });
        else if (type === 2) entries.set(number, { kind: "compressed", stream: field(1, 0), index: field(2, 0) });
        else entries.set(number, { kind: "offset", offset: -1, generation: 0 });
      }
    }
    return dict;
  }

  /** Cross-reference data rebuilt from the "N G obj" headers; the trailer from the last trailer or cross-reference stream. */
  private rebuildSections(): void {
    const text = this.bytes.toString("latin1");
    const entries = (this.entries = new Map<number, XrefEntry>());
    for (const match of text.matchAll(/(?<![\d])(\d+)\s+(\d+)\s+obj\b/g)) {
      entries.set(Number(match[1]), { kind: "offset", offset: match.index, generation: Number(match[2]) });
    }
    let trailer: PDFDict | undefined;
    const trailerAt = text.lastIndexOf("trailer");
    if (trailerAt >= 0) {
      const parsed = PDFObjectParser.forBytes(this.bytes.subarray(trailerAt + 7), this.context).parseObject();
      if (parsed instanceof PDFDict) trailer = parsed;
    }
    if (!trailer) {
      for (const [number] of [...entries].reverse()) {
        const object = this.lookup(PDFRef.of(number));
        if (object instanceof PDFRawStream && object.dict.get(PDFName.of("Type")) === PDFName.of("XRef")) {
          trailer = object.dict;
          break;
        }
      }
    }
    if (!trailer || !(trailer.get(PDFName.of("Root")) instanceof PDFRef)) throw new PdfReadError("the cross-reference data is damaged and no trailer was found");
    // an update after a rebuilt file must not point back at damaged sections
    trailer.delete(PDFName.of("Prev"));
    trailer.delete(PDFName.of("XRefStm"));
    const match = /startxref\s+(\d+)\s*%%EOF\s*$/.exec(text.slice(-2048));
    Object.assign(this, { trailer, lastXrefOffset: match ? Number(match[1]) : 0, lastXrefIsStream: false, rebuilt: true });
  }
}

function numberOf(value: PDFObject | undefined): number {
  if (!(value instanceof PDFNumber)) throw new PdfReadError("expected a number");
  return value.asNumber();
}

function arrayOfNumbers(value: PDFObject | undefined): number[] {
  if (!(value instanceof PDFArray)) throw new PdfReadError("expected an array");
  return value.asArray().map(numberOf);
}

/** The decoded data of a FlateDecode (or unfiltered) stream, PNG predictors undone. */
function decodeStream(stream: PDFRawStream, file: PdfFile): Buffer {
  const filter = file.resolve(stream.dict.get(PDFName.of("Filter")));
  const filters = filter instanceof PDFArray ? filter.asArray() : filter ? [filter] : [];
  let data = Buffer.from(stream.contents.buffer, stream.contents.byteOffset, stream.contents.byteLength);
  for (const name of filters) {
    if (name !== PDFName.of("FlateDecode")) throw new PdfReadError(`unsupported filter ${String(name)} on a structure stream`);
    data = inflateSync(data);
  }
  const parameters = file.resolveDict(stream.dict.get(PDFName.of("DecodeParms")));
  const predictor = parameters?.get(PDFName.of("Predictor"));
  if (predictor instanceof PDFNumber && predictor.asNumber() >= 10) {
    const columns = parameters?.get(PDFName.of("Columns"));
    data = undoPngPredictor(data, columns instanceof PDFNumber ? columns.asNumber() : 1);
  }
  return data;
}

/** PNG row filters (None, Sub, Up, Average, Paeth) over one-byte samples, as cross-reference streams use them. */
function undoPngPredictor(data: Buffer, columns: number): Buffer {
  const rows = Math.floor(data.length / (columns + 1));
  const out = Buffer.alloc(rows * columns);
  for (let row = 0; row < rows; row++) {
    const type = data[row * (columns + 1)]!;
    for (let column = 0; column < columns; column++) {
      const raw = data[row * (columns + 1) + 1 + column]!;
      const left = column > 0 ? out[row * columns + column - 1]! : 0;
      const up = row > 0 ? out[(row - 1) * columns + column]! : 0;
      const upLeft = row > 0 && column > 0 ? out[(row - 1) * columns + column - 1]! : 0;
      let value = raw;
      if (type === 1) value = raw + left;
      else if (type === 2) value = raw + up;
      else if (type === 3) value = raw + Math.floor((left + up) / 2);
      else if (type === 4) {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        value = raw + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
      }
      out[row * columns + column] = value & 0xff;
    }
  }
  return out;
}
