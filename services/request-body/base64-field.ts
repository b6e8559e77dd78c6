/**
 * Takes one base64 string out of a JSON body as it streams in, decoding it on
 * the way, so a large document never exists as JSON text, as a JavaScript
 * string, or in more than one decoded copy. Everything else in the body is
 * kept as it came, with that string's contents left out, for JSON.parse: the
 * body is judged by the same parser as any other, with the same messages.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;

/** What the standard base64 rule says of the extracted string (as `BASE64` in sign-request-schema.ts). */
export type Base64Verdict = "empty" | "valid" | "invalid";

export interface ExtractedField {
  verdict: Base64Verdict;
  /** The decoded bytes, when the verdict is "valid"; a buffer alone in its ArrayBuffer. */
  bytes?: Buffer;
}

/** The bytes of the standard base64 alphabet (A–Z a–z 0–9 + /), by value. */
const ALPHABET = new Uint8Array(256);
for (const character of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") ALPHABET[character.charCodeAt(0)] = 1;

/** Looked through a block at a time: see {@link alphabetEnd}. */
const SCAN_BLOCK_BYTES = 1024;

/**
 * The index of the first byte from `from` that is not of the alphabet, or
 * `bytes.length`. A table lookup per byte, a third of what a regular
 * expression over the text costs; in blocks, because a loop over a whole
 * chunk stays in the on-stack-replaced code of V8's mid tier, which is slower
 * still (bench/README.md, "Reading a base64 document out of a JSON body").
 */
function alphabetEnd(bytes: Buffer, from: number): number {
  for (let start = from; start < bytes.length; start += SCAN_BLOCK_BYTES) {
    const end = Math.min(start + SCAN_BLOCK_BYTES, bytes.length);
    const stop = alphabetEndInBlock(bytes, start, end);
    if (stop < end) return stop;
  }
  return bytes.length;
}

function alphabetEndInBlock(bytes: Buffer, from: number, to: number): number {
  let at = from;
  while (at < to && ALPHABET[bytes[at]] === 1) at++;
  return at;
}

/** ES2024's resizable ArrayBuffer: Node 24 has it, the project's TypeScript lib (ES2023) does not. */
interface ResizableArrayBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}
const ResizableArrayBuffer = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableArrayBuffer;

/**
 * Checks a base64 string given in parts against the standard rule (alphabet
 * A–Z a–z 0–9 + /, "=" padding of at most two at the end, length a multiple
 * of 4) and decodes it while it is valid, in place: into a resizable
 * ArrayBuffer whose `maxBytes` are only address space until written, and
 * which ends exactly as long as the bytes, so no copy is ever made.
 */
export class Base64Decoder {
  private valid = true;
  private length = 0;
  private padding = 0;
  /** 0–3 characters waiting for the rest of their group of four. */
  private carry = "";
  private readonly buffer: ResizableArrayBuffer;
  private filled = 0;

  /** `maxBytes`: the most the string can decode to, e.g. 3/4 of the body's limit. */
  constructor(maxBytes: number) {
    this.buffer = new ResizableArrayBuffer(0, { maxByteLength: maxBytes });
  }

  /** The string's next characters. */
  push(text: string): void {
    // a character past Latin-1 is no base64 character: a byte that is none either
    const bytes = Buffer.from(Array.from(text, (character) => (character.charCodeAt(0) < 256 ? character.charCodeAt(0) : 0)));
    for (let at = 0; at < bytes.length; ) {
      const stop = alphabetEnd(bytes, at);
      if (stop > at) this.pushAlphabet(bytes, at, stop);
      if (stop < bytes.length) this.pushOther(bytes[stop]);
      at = stop + 1;
    }
  }

  /** The string's next characters: `bytes[from, to)`, every one of the alphabet. */
  pushAlphabet(bytes: Buffer, from: number, to: number): void {
    if (!this.valid) return;
    this.length += to - from;
    if (this.padding > 0) return this.invalidate();
    this.decode(bytes.toString("latin1", from, to), to - from);
  }

  /** The string's next character, `code`, which is not of the alphabet: padding, or what makes the string no base64. */
  pushOther(code: number): void {
    if (!this.valid) return;
    this.length++;
    if (code !== EQUALS || ++this.padding > 2) this.invalidate();
  }

  finish(): ExtractedField {
    if (this.length === 0) return { verdict: "empty" };
    if (!this.valid || this.length % 4 !== 0) {
      this.invalidate();
      return { verdict: "invalid" };
    }
    if (this.padding > 0) this.write(this.carry + "=".repeat(this.padding));
    this.buffer.resize(this.filled);
    return { verdict: "valid", bytes: Buffer.from(this.buffer, 0, this.filled) };
  }

  private invalidate(): void {
    this.valid = false;
    this.buffer.resize(0); // gives the pages back now
  }

  /** Decodes the whole groups of four among `carry` and `text[0, end)`, keeping what is left over. */
  private decode(text: string, end: number): void {
    let from = 0;
    if (this.carry.length > 0) {
      from = Math.min(4 - this.carry.length, end);
      this.carry += text.slice(0, from);
      if (this.carry.length < 4) return;
      this.write(this.carry);
    }
    const whole = from + Math.floor((end - from) / 4) * 4;
    this.write(text.slice(from, whole));
    this.carry = text.slice(whole, end);
  }

  /** Decodes whole groups of four characters (the last may be padded) after what is there. */
  private write(groups: string): void {
    const room = (groups.length / 4) * 3;
    this.buffer.resize(this.filled + room);
    this.filled += Buffer.from(this.buffer, this.filled, room).write(groups, "base64");
  }
}

/** JSON escapes after the backslash, as the characters they stand for. */
const SHORT_ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const UNICODE_ESCAPE = /^u[0-9A-Fa-f]{4}$/;

/**
 * The contents of one JSON string, after its opening quote: the characters
 * (escapes resolved) go to a {@link Base64Decoder}. A control character or a
 * malformed escape makes the JSON invalid: `broken` is then set, with the raw
 * bytes read since the last character handed on.
 */
class StringContents {
  readonly decoder: Base64Decoder;
  /** A backslash sequence not yet complete, as read (latin1: one character per byte). */
  private escape = "";
  broken?: Buffer;

  constructor(maxBytes: number) {
    this.decoder = new Base64Decoder(maxBytes);
  }

  /** Reads `chunk` from `from`; the index of the closing quote, or -1 when the string goes on (or broke: see `broken`). */
  read(chunk: Buffer, from: number): number {
    // one byte is one character here: a byte from 0x80 up is no base64 character, whatever character it begins
    let at = from;
    while (at < chunk.length) {
      if (this.escape) {
        at = this.readEscape(chunk, at);
        if (this.broken) return -1;
        continue;
      }
      // the base64 alphabet is scanned for once; only where it stops is the character told apart
      const stop = alphabetEnd(chunk, at);
      if (stop > at) this.decoder.pushAlphabet(chunk, at, stop);
      if (stop === chunk.length) break;
      const code = chunk[stop];
      if (code === QUOTE) return stop;
      if (code < 0x20) {
        this.broken = Buffer.from(chunk.subarray(stop));
        return -1;
      }
      if (code === BACKSLASH) this.escape = "\\";
      else this.decoder.pushOther(code);
      at = stop + 1;
    }
    return -1;
  }

  private readEscape(chunk: Buffer, at: number): number {
    const wanted = () => (this.escape[1] === "u" ? 6 : 2);
    const taken = Math.min(wanted() - this.escape.length, chunk.length - at);
    this.escape += chunk.toString("latin1", at, at + taken);
    at += taken;
    if (this.escape.length < wanted()) return at;
    const body = this.escape.slice(1);
    const character = body.length === 1 ? SHORT_ESCAPES[body] : UNICODE_ESCAPE.test(body) ? String.fromCharCode(parseInt(body.slice(1), 16)) : undefined;
    if (character === undefined) {
      this.broken = Buffer.concat([Buffer.from(this.escape, "latin1"), chunk.subarray(at)]);
      return at;
    }
    this.escape = "";
    this.decoder.push(character);
    return at;
  }
}

interface Frame {
  isObject: boolean;
  /** Inside an object: the next string is a key. */
  expectingKey: boolean;
  /** The key of the value being read, when it is compared with the path (null: not a name of the path). */
  key: string | null;
}

const enum Mode {
  /** Between tokens: structure, numbers, literals. */
  Between,
  /** Inside a string that is kept. */
  String,
  /** Inside the string being extracted. */
  Field,
  /** The JSON broke inside the extracted string: the rest is kept as it is, for JSON.parse to report. */
  Verbatim,
}

/**
 * Splits a JSON body, fed chunk by chunk, into its text without the contents
 * of the string at `path` (object keys from the top: ["document", "base64"])
 * and that string decoded from base64. A key written with escapes matches
 * like its plain spelling; when the same key comes twice the last one counts,
 * as in JSON.parse. What the tokenizer sees in a body that is not valid JSON
 * does not matter: leaving out the contents of a well-formed string keeps it
 * invalid, and a string that breaks is kept whole from where it broke.
 */
export class Base64FieldExtractor {
  private readonly kept: Buffer[] = [];
  private readonly frames: Frame[] = [];
  private mode = Mode.Between;
  private escaped = false;
  /** Raw bytes of a key compared with the path, while it is read (null: not compared). */
  private key: number[] | null = null;
  private field?: StringContents;
  /** Longest raw key that can spell a name of the path: each of its characters a \uXXXX escape. */
  private readonly maxKeyBytes: number;

  /** `maxBytes`: the most the body can hold (bounds what its string can decode to). */
  constructor(
    private readonly path: readonly string[],
    private readonly maxBytes: number,
  ) {
    this.maxKeyBytes = 6 * Math.max(...path.map((name) => name.length));
  }

  write(chunk: Buffer): void {
    if (this.mode === Mode.Verbatim) return void this.kept.push(chunk);
    let keptFrom = this.mode === Mode.Field ? -1 : 0;
    for (let i = 0; i < chunk.length; ) {
      if (this.mode === Mode.Field) {
        const field = this.field!;
        const end = field.read(chunk, i);
        if (field.broken) {
          this.kept.push(field.broken);
          this.mode = Mode.Verbatim;
          return;
        }
        if (end < 0) return;
        this.mode = Mode.Between;
        keptFrom = end;
        i = end + 1;
      } else if (this.mode === Mode.String) {
        i = this.readString(chunk, i);
      } else {
        const byte = chunk[i++];
        if (byte === QUOTE && this.startString()) {
          this.kept.push(chunk.subarray(keptFrom, i));
          keptFrom = -1;
        } else {
          this.structure(byte);
        }
      }
    }
    if (keptFrom >= 0) this.kept.push(keptFrom === 0 ? chunk : chunk.subarray(keptFrom));
  }

  /** The JSON text without the extracted string's contents, and the decoder of the last string extracted, if any. */
  end(): { text: Buffer; field?: Base64Decoder } {
    const text = Buffer.concat(this.kept);
    this.kept.length = 0;
    return { text, field: this.mode === Mode.Between ? this.field?.decoder : undefined };
  }

  private structure(byte: number): void {
    const top = this.frames.at(-1);
    switch (byte) {
      case 0x7b /* { */:
      case 0x5b /* [ */:
        this.frames.push({ isObject: byte === 0x7b, expectingKey: byte === 0x7b, key: null });
        break;
      case 0x7d /* } */:
      case 0x5d /* ] */:
        this.frames.pop();
        break;
      case 0x2c /* , */:
        if (top?.isObject) [top.expectingKey, top.key] = [true, null];
        break;
    }
  }

  /** At an opening quote: true when this string is the one to extract. */
  private startString(): boolean {
    const top = this.frames.at(-1);
    if (top?.isObject && top.expectingKey) {
      top.expectingKey = false;
      this.key = this.frames.length <= this.path.length && this.onPath(this.frames.length - 1) ? [] : null;
      this.mode = Mode.String;
      return false;
    }
    if (this.frames.length === this.path.length && this.onPath(this.frames.length)) {
      this.field = new StringContents(Math.floor(this.maxBytes / 4) * 3);
      this.mode = Mode.Field;
      return true;
    }
    this.mode = Mode.String;
    return false;
  }

  /** Whether the first `depth` frames are objects under the keys of the path. */
  private onPath(depth: number): boolean {
    for (let d = 0; d < depth; d++) {
      const frame = this.frames[d];
      if (!frame.isObject || frame.key !== this.path[d]) return false;
    }
    return true;
  }

  /** Reads a kept string from `from`; the index after what was read. */
  private readString(chunk: Buffer, from: number): number {
    let i = from;
    for (; i < chunk.length; i++) {
      const byte = chunk[i];
      if (this.escaped) this.escaped = false;
      else if (byte === BACKSLASH) this.escaped = true;
      else if (byte === QUOTE) break;
    }
    if (this.key && this.key.length <= this.maxKeyBytes) this.key.push(...chunk.subarray(from, Math.min(i, from + this.maxKeyBytes + 1)));
    if (i === chunk.length) return i;
    this.mode = Mode.Between;
    if (this.key) this.frames.at(-1)!.key = this.key.length > this.maxKeyBytes ? null : decodeKey(this.key);
    this.key = null;
    return i + 1;
  }
}

function decodeKey(raw: number[]): string | null {
  try {
    return JSON.parse(`"${Buffer.from(raw).toString("utf8")}"`) as string;
  } catch {
    return null; // not a valid JSON string: JSON.parse of the whole body says so
  }
}
