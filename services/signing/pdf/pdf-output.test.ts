import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { PdfOutput } from "./pdf-output.js";

/** ES2024's resizable ArrayBuffer (the project's TypeScript lib is ES2023). */
type Resizable = ArrayBuffer & { resizable: boolean; maxByteLength: number; resize(length: number): void };
const ResizableArrayBuffer = ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => Resizable;

/** `bytes` in a resizable ArrayBuffer of their own that can grow to `maxByteLength`, as the gateway decodes an upload. */
function growable(bytes: Buffer, maxByteLength: number): Buffer {
  const buffer = new ResizableArrayBuffer(bytes.length, { maxByteLength });
  const view = Buffer.from(buffer, 0, bytes.length); // a fixed length, like the gateway's
  bytes.copy(view);
  return view;
}

const sha256 = (...parts: Buffer[]) => parts.reduce((hash, part) => hash.update(part), createHash("sha256")).digest();
const document = Buffer.from("%PDF-1.7\n% the document received\n%%EOF\n");
const revisions = [Buffer.from("1 0 obj\n<< /Revision 1 >>\nendobj\n"), Buffer.from("2 0 obj\n<< /Revision 2 >>\nendobj\n")];

describe("PdfOutput", () => {
  test("appendingTo a resizable ArrayBuffer the document fills: revisions appended in it, no copy, the result filling it", () => {
    const received = growable(document, 4096);
    const output = PdfOutput.appendingTo(received);
    for (const revision of revisions) output.append(revision);
    const result = output.bytes;
    assert.equal(result.buffer, received.buffer, "the same ArrayBuffer");
    assert.equal(result.byteOffset, 0);
    assert.equal(result.buffer.byteLength, result.length, "the result fills its ArrayBuffer (it moves to another thread whole)");
    assert.ok(result.equals(Buffer.concat([document, ...revisions])));
    assert.ok(received.equals(document), "the received bytes stay as they were");
  });

  test("digests are the same in place and in a copy", () => {
    const inPlace = PdfOutput.appendingTo(growable(document, 4096));
    const copied = new PdfOutput(document);
    for (const output of [inPlace, copied]) output.append(revisions[0]!);
    const hole = [document.length + 2, document.length + 6] as const;
    const expected = sha256(Buffer.concat([document, revisions[0]!]).subarray(0, hole[0]), Buffer.concat([document, revisions[0]!]).subarray(hole[1]));
    assert.ok(inPlace.digestAround(...hole).equals(expected));
    assert.ok(copied.digestAround(...hole).equals(expected));
  });

  test("a resizable ArrayBuffer without the room: the bytes are copied out when it runs out, its own left at its limit", () => {
    const received = growable(document, document.length + revisions[0]!.length);
    const output = PdfOutput.appendingTo(received);
    output.append(revisions[0]!);
    assert.equal(output.bytes.buffer, received.buffer, "the first revision fits in place");
    output.append(revisions[1]!);
    assert.notEqual(output.bytes.buffer, received.buffer);
    assert.ok(output.bytes.equals(Buffer.concat([document, ...revisions])));
    assert.ok(received.equals(document));
  });

  test("a plain buffer, or a view of part of a resizable one, is copied: the caller's memory is not written", () => {
    const plain = Buffer.alloc(document.length); // not from the pool, which other allocations write to
    document.copy(plain);
    const shared = growable(Buffer.concat([document, Buffer.from("another document")]), 4096).subarray(0, document.length);
    for (const received of [plain, shared]) {
      const before = Buffer.from(new Uint8Array(received.buffer, 0, received.buffer.byteLength));
      const output = PdfOutput.appendingTo(received);
      for (const revision of revisions) output.append(revision);
      assert.notEqual(output.bytes.buffer, received.buffer);
      assert.ok(output.bytes.equals(Buffer.concat([document, ...revisions])));
      assert.ok(Buffer.from(new Uint8Array(received.buffer, 0, received.buffer.byteLength)).equals(before), "the caller's ArrayBuffer is untouched");
    }
  });

  test("the constructor copies even a resizable ArrayBuffer (the caller keeps it)", () => {
    const received = growable(document, 4096);
    const output = new PdfOutput(received);
    output.append(revisions[0]!);
    assert.notEqual(output.bytes.buffer, received.buffer);
    assert.equal(received.buffer.byteLength, document.length);
  });
});
