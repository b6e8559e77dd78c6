/**
 * Just enough ZIP to read a few parts of a DOCX and to write it back with
 * some parts replaced: every entry we do not touch keeps its compressed bytes,
 * flags, timestamps and extra fields exactly (only its offsets change).
 * Reads ZIP64 archives; writes classic ZIP (a DOCX never needs more).
 */
import { deflateSync, inflateSync } from "fflate";
import { crc32 } from "./crc32.js";

export class ZipError extends Error {
  override name = "ZipError";
}

export interface ZipEntry {
  /** The entry's path inside the archive, e.g. "word/settings.xml". */
  readonly name: string;
  readonly nameBytes: Uint8Array;
  readonly versionMadeBy: number;
  readonly versionNeeded: number;
  readonly flags: number;
  /** 0 stored, 8 deflated. */
  readonly method: number;
  readonly dosTime: number;
  readonly dosDate: number;
  readonly crc: number;
  readonly uncompressedSize: number;
  readonly internalAttributes: number;
  readonly externalAttributes: number;
  readonly centralExtra: Uint8Array;
  readonly localExtra: Uint8Array;
  readonly comment: Uint8Array;
  /** The entry's data as stored in the archive (compressed when method is 8). */
  readonly data: Uint8Array;
}

export interface ZipArchive {
  readonly entries: readonly ZipEntry[];
  readonly comment: Uint8Array;
}

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_END = 0x06054b50;
const SIG_END64 = 0x06064b50;
const SIG_END64_LOCATOR = 0x07064b50;
const SIG_DESCRIPTOR = 0x08074b50;
const ZIP64_EXTRA = 0x0001;
const FLAG_ENCRYPTED = 0x0001;
const FLAG_DATA_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;

const utf8 = new TextDecoder("utf-8");

function u64(view: DataView, at: number): number {
  return view.getUint32(at, true) + view.getUint32(at + 4, true) * 0x1_0000_0000;
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function findEndOfCentralDirectory(view: DataView): number {
  const last = view.byteLength - 22;
  for (let at = last; at >= 0 && at >= last - U16_MAX; at--) {
    if (view.getUint32(at, true) === SIG_END) return at;
  }
  throw new ZipError("not a ZIP archive: no end of central directory record");
}

interface Directory {
  count: number;
  offset: number;
}

function readDirectoryLocation(view: DataView, end: number): Directory {
  const count = view.getUint16(end + 10, true);
  const offset = view.getUint32(end + 16, true);
  if (count !== U16_MAX && offset !== U32_MAX) return { count, offset };
  const locator = end - 20;
  if (locator < 0 || view.getUint32(locator, true) !== SIG_END64_LOCATOR) return { count, offset };
  const end64 = u64(view, locator + 8);
  if (end64 + 56 > view.byteLength || view.getUint32(end64, true) !== SIG_END64) {
    throw new ZipError("damaged ZIP64 end of central directory");
  }
  return { count: u64(view, end64 + 32), offset: u64(view, end64 + 48) };
}

/** Splits an extra field into its records; null when it is not well formed. */
function extraRecords(extra: Uint8Array): Array<{ id: number; body: Uint8Array; raw: Uint8Array }> | null {
  const view = viewOf(extra);
  const records = [];
  let at = 0;
  while (at + 4 <= extra.length) {
    const size = view.getUint16(at + 2, true);
    if (at + 4 + size > extra.length) return null;
    records.push({ id: view.getUint16(at, true), body: extra.subarray(at + 4, at + 4 + size), raw: extra.subarray(at, at + 4 + size) });
    at += 4 + size;
  }
  return at === extra.length ? records : null;
}

function withoutZip64(extra: Uint8Array): Uint8Array {
  const records = extraRecords(extra);
  if (!records || !records.some((r) => r.id === ZIP64_EXTRA)) return extra;
  return concat(records.filter((r) => r.id !== ZIP64_EXTRA).map((r) => r.raw));
}

/** Parses the central directory; entry data stays a view into `bytes`. Throws ZipError. */
export function readZip(bytes: Uint8Array): ZipArchive {
  const view = viewOf(bytes);
  const end = findEndOfCentralDirectory(view);
  const { count, offset } = readDirectoryLocation(view, end);
  const entries: ZipEntry[] = [];
  let at = offset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== SIG_CENTRAL) {
      throw new ZipError("damaged ZIP central directory");
    }
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const nameBytes = bytes.subarray(at + 46, at + 46 + nameLength);
    const centralExtra = bytes.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength);
    let compressedSize = view.getUint32(at + 20, true);
    let uncompressedSize = view.getUint32(at + 24, true);
    let localOffset = view.getUint32(at + 42, true);
    const zip64 = extraRecords(centralExtra)?.find((r) => r.id === ZIP64_EXTRA);
    if (zip64) {
      const z = viewOf(zip64.body);
      let field = 0;
      const next = (): number => {
        if (field + 8 > zip64.body.length) throw new ZipError("damaged ZIP64 extra field");
        const value = u64(z, field);
        field += 8;
        return value;
      };
      if (uncompressedSize === U32_MAX) uncompressedSize = next();
      if (compressedSize === U32_MAX) compressedSize = next();
      if (localOffset === U32_MAX) localOffset = next();
    }
    if (localOffset + 30 > bytes.length || view.getUint32(localOffset, true) !== SIG_LOCAL) {
      throw new ZipError("damaged ZIP local file header");
    }
    const localNameLength = view.getUint16(localOffset + 26, true);
    const localExtraLength = view.getUint16(localOffset + 28, true);
    const localExtraStart = localOffset + 30 + localNameLength;
    const dataStart = localExtraStart + localExtraLength;
    if (dataStart + compressedSize > bytes.length) throw new ZipError("truncated ZIP entry");
    entries.push({
      name: utf8.decode(nameBytes),
      nameBytes,
      versionMadeBy: view.getUint16(at + 4, true),
      versionNeeded: view.getUint16(at + 6, true),
      flags: view.getUint16(at + 8, true),
      method: view.getUint16(at + 10, true),
      dosTime: view.getUint16(at + 12, true),
      dosDate: view.getUint16(at + 14, true),
      crc: view.getUint32(at + 16, true),
      uncompressedSize,
      internalAttributes: view.getUint16(at + 36, true),
      externalAttributes: view.getUint32(at + 38, true),
      centralExtra,
      localExtra: bytes.subarray(localExtraStart, dataStart),
      comment: bytes.subarray(at + 46 + nameLength + extraLength, at + 46 + nameLength + extraLength + commentLength),
      data: bytes.subarray(dataStart, dataStart + compressedSize),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  const commentLength = view.getUint16(end + 20, true);
  return { entries, comment: bytes.subarray(end + 22, Math.min(bytes.length, end + 22 + commentLength)) };
}

/** The uncompressed content of an entry. Throws ZipError for encrypted entries or unknown methods. */
export function entryContent(entry: ZipEntry): Uint8Array {
  if (entry.flags & FLAG_ENCRYPTED) throw new ZipError(`${entry.name} is encrypted`);
  if (entry.method === 0) return entry.data;
  if (entry.method === 8) {
    try {
      return inflateSync(entry.data);
    } catch (error) {
      throw new ZipError(`${entry.name}: ${(error as Error).message}`);
    }
  }
  throw new ZipError(`${entry.name}: unsupported compression method ${entry.method}`);
}

function dosDateTime(date: Date): { dosTime: number; dosDate: number } {
  const year = Math.min(Math.max(date.getFullYear(), 1980), 2107);
  return {
    dosTime: (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1),
    dosDate: ((year - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
}

/** The entry with new content, deflated; name, attributes and extra fields are kept. */
export function withContent(entry: ZipEntry, content: Uint8Array, modified: Date): ZipEntry {
  return {
    ...entry,
    ...dosDateTime(modified),
    versionNeeded: Math.max(entry.versionNeeded, 20),
    flags: entry.flags & ~(FLAG_DATA_DESCRIPTOR | FLAG_ENCRYPTED),
    method: 8,
    crc: crc32(content),
    uncompressedSize: content.length,
    data: deflateSync(content),
  };
}

/** A new deflated entry. */
export function newEntry(name: string, content: Uint8Array, modified: Date): ZipEntry {
  const empty = new Uint8Array(0);
  const nameBytes = new TextEncoder().encode(name);
  const ascii = nameBytes.every((b) => b < 0x80);
  return withContent(
    {
      name,
      nameBytes,
      versionMadeBy: 20,
      versionNeeded: 20,
      flags: ascii ? 0 : FLAG_UTF8,
      method: 8,
      dosTime: 0,
      dosDate: 0,
      crc: 0,
      uncompressedSize: 0,
      internalAttributes: 0,
      externalAttributes: 0,
      centralExtra: empty,
      localExtra: empty,
      comment: empty,
      data: empty,
    },
    content,
    modified,
  );
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

function header(size: number, fill: (view: DataView) => void): Uint8Array {
  const bytes = new Uint8Array(size);
  fill(viewOf(bytes));
  return bytes;
}

/**
 * The 26 bytes local and central headers share, from "version needed" to
 * "extra field length". Sizes and CRC are zero in a local header whose entry
 * is followed by a data descriptor.
 */
function writeSharedFields(v: DataView, at: number, entry: ZipEntry, extraLength: number, withSizes: boolean): void {
  v.setUint16(at, entry.versionNeeded, true);
  v.setUint16(at + 2, entry.flags, true);
  v.setUint16(at + 4, entry.method, true);
  v.setUint16(at + 6, entry.dosTime, true);
  v.setUint16(at + 8, entry.dosDate, true);
  v.setUint32(at + 10, withSizes ? entry.crc : 0, true);
  v.setUint32(at + 14, withSizes ? entry.data.length : 0, true);
  v.setUint32(at + 18, withSizes ? entry.uncompressedSize : 0, true);
  v.setUint16(at + 22, entry.nameBytes.length, true);
  v.setUint16(at + 24, extraLength, true);
}

function checkClassic(entry: ZipEntry, offset: number): void {
  if (entry.data.length > U32_MAX || entry.uncompressedSize > U32_MAX || offset > U32_MAX) {
    throw new ZipError(`${entry.name}: archives over 4 GB are not supported`);
  }
}

/** Serialises the archive: local records in order, then the central directory. */
export function writeZip(archive: ZipArchive): Uint8Array {
  if (archive.entries.length > U16_MAX) throw new ZipError("too many ZIP entries");
  const chunks: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const entry of archive.entries) {
    checkClassic(entry, offset);
    const descriptor = (entry.flags & FLAG_DATA_DESCRIPTOR) !== 0;
    const localExtra = withoutZip64(entry.localExtra);
    const local = header(30, (v) => {
      v.setUint32(0, SIG_LOCAL, true);
      writeSharedFields(v, 4, entry, localExtra.length, !descriptor);
    });
    const record = [local, entry.nameBytes, localExtra, entry.data];
    if (descriptor) {
      record.push(
        header(16, (v) => {
          v.setUint32(0, SIG_DESCRIPTOR, true);
          v.setUint32(4, entry.crc, true);
          v.setUint32(8, entry.data.length, true);
          v.setUint32(12, entry.uncompressedSize, true);
        }),
      );
    }
    const centralExtra = withoutZip64(entry.centralExtra);
    central.push(
      header(46, (v) => {
        v.setUint32(0, SIG_CENTRAL, true);
        v.setUint16(4, entry.versionMadeBy, true);
        writeSharedFields(v, 6, entry, centralExtra.length, true);
        v.setUint16(32, entry.comment.length, true);
        v.setUint16(36, entry.internalAttributes, true);
        v.setUint32(38, entry.externalAttributes, true);
        v.setUint32(42, offset, true);
      }),
      entry.nameBytes,
      centralExtra,
      entry.comment,
    );
    for (const chunk of record) {
      chunks.push(chunk);
      offset += chunk.length;
    }
  }
  const directory = concat(central);
  if (offset > U32_MAX) throw new ZipError("archives over 4 GB are not supported");
  const comment = archive.comment.subarray(0, U16_MAX);
  const end = header(22, (v) => {
    v.setUint32(0, SIG_END, true);
    v.setUint16(8, archive.entries.length, true);
    v.setUint16(10, archive.entries.length, true);
    v.setUint32(12, directory.length, true);
    v.setUint32(16, offset, true);
    v.setUint16(20, comment.length, true);
  });
  return concat([...chunks, directory, end, comment]);
}
