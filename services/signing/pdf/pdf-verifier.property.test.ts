import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { textPdf } from "../../../test/support/pdf-fixtures.js";
import { ServiceError } from "../../core/errors.js";
import { loadOrCreateLocalKey } from "../keys/local-key.js";
import { signPdf } from "./pdf-signer.js";
import { verifyPdfSignatures, type PdfVerification } from "./pdf-verifier.js";

// Property tests of the signature verifier behind POST /v1/verify: any bytes give a verdict or
// a 422 (never another error, never a hang), and no change to the bytes a signature covers,
// nor a truncation, nor a forged /ByteRange, is ever reported valid.

const NUM_RUNS = 100;
/** A verification slower than this counts as a hang. */
const TIME_BOUND_MS = 5000;

/** The verdict, or the ServiceError; anything else thrown fails the property. */
async function verdict(pdf: Buffer): Promise<PdfVerification | ServiceError> {
  const started = Date.now();
  try {
    return await verifyPdfSignatures(pdf);
  } catch (error) {
    assert.ok(error instanceof ServiceError, `not a ServiceError: ${(error as Error)?.stack ?? String(error)}`);
    assert.equal(error.code, "UNPROCESSABLE_DOCUMENT", error.message);
    assert.equal(error.httpStatus, 422);
    return error;
  } finally {
    assert.ok(Date.now() - started < TIME_BOUND_MS, `verification took ${Date.now() - started} ms`);
  }
}

const isValid = (result: PdfVerification | ServiceError) => !(result instanceof ServiceError) && result.valid;

describe("verifyPdfSignatures (fast-check)", () => {
  const root = mkdtempSync(join(tmpdir(), "docservice-pdf-verifier-property-"));
  let signed: Buffer;
  /** [a, b, c, d] of the signature: bytes [a, a+b) and [c, c+d) are signed, [b, c) is the /Contents hex. */
  let range: [number, number, number, number];

  before(async () => {
    const key = await loadOrCreateLocalKey(join(root, "key"), { algorithm: "ECDSA-P256", subject: "Property Test" });
    signed = await signPdf(await textPdf(1, 5), key, { signerName: "Property Test", signingTime: new Date("2026-01-02T03:04:05Z") });
    range = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(signed.toString("latin1"))!.slice(1).map(Number) as typeof range;
    assert.equal(isValid(await verdict(signed)), true, "the unmodified signed PDF verifies");
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  /** An offset inside the signed bytes (either side of the /Contents hole). */
  const signedOffset = () => fc.oneof(fc.nat({ max: range[1] - 1 }), fc.integer({ min: range[2], max: range[2] + range[3] - 1 }));

  test("arbitrary bytes, with or without a PDF header: a verdict or a 422", async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 2048 }).map((b) => Buffer.from(b)),
      fc.uint8Array({ maxLength: 2048 }).map((b) => Buffer.concat([Buffer.from("%PDF-1.7\n"), b])),
      fc.array(fc.constantFrom("%PDF-1.7\n", "1 0 obj\n", "<< /Type /Catalog /Pages 2 0 R >>\n", "endobj\n", "/ByteRange [0 10 20 30]", "/Contents <3082>", "xref\n0 1\n", "trailer\n<< /Root 1 0 R >>\n", "startxref\n0\n", "%%EOF\n", "stream\n", "endstream\n"), { maxLength: 20 }).map((parts) => Buffer.from(parts.join(""), "latin1")),
    );
    await fc.assert(
      fc.asyncProperty(bytes, async (pdf) => {
        const result = await verdict(pdf);
        assert.equal(isValid(result), false, "random bytes verified");
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("one or more bytes changed inside the signed ranges: never valid", async () => {
    const mutations = fc.array(fc.tuple(signedOffset(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(mutations, async (changes) => {
        const pdf = Buffer.from(signed);
        for (const [offset, xor] of changes) pdf[offset]! ^= xor;
        if (pdf.equals(signed)) return; // the changes cancelled out
        assert.equal(isValid(await verdict(pdf)), false, `changed at ${changes.map(([o]) => o).join(", ")} and still valid`);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("truncated, or with bytes inserted or removed anywhere: never valid", async () => {
    const edits = fc.oneof(
      fc.nat({ max: signed.length - 1 }).map((length) => signed.subarray(0, length)),
      fc.tuple(fc.nat({ max: signed.length }), fc.uint8Array({ minLength: 1, maxLength: 16 })).map(([at, bytes]) => Buffer.concat([signed.subarray(0, at), bytes, signed.subarray(at)])),
      fc.tuple(fc.nat({ max: signed.length - 1 }), fc.integer({ min: 1, max: 64 })).map(([at, count]) => Buffer.concat([signed.subarray(0, at), signed.subarray(at + count)])),
    );
    await fc.assert(
      fc.asyncProperty(edits, async (pdf) => {
        assert.equal(isValid(await verdict(pdf)), false, `edited to ${pdf.length} bytes and still valid`);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("a forged /ByteRange (any four numbers of the same width): never valid unless it is the original", async () => {
    const text = signed.toString("latin1");
    const match = /\/ByteRange\s*\[([^\]]*)\]/.exec(text)!;
    const inside = match[1]!;
    const at = match.index + match[0].indexOf("[") + 1;
    const numbers = fc.tuple(...range.map((n) => fc.oneof(fc.constant(n), fc.nat({ max: signed.length + 100 }), fc.integer({ min: n - 3, max: n + 3 }).filter((m) => m >= 0))));
    await fc.assert(
      fc.asyncProperty(numbers, async (forged) => {
        const replacement = forged.join(" ").padEnd(inside.length, " ");
        if (replacement.length !== inside.length) return; // would shift the file
        const pdf = Buffer.concat([signed.subarray(0, at), Buffer.from(replacement, "latin1"), signed.subarray(at + inside.length)]);
        const result = await verdict(pdf);
        // the /ByteRange is itself signed: any change to its text changes the signed bytes
        if (!pdf.equals(signed)) assert.equal(isValid(result), false, `ByteRange [${forged.join(" ")}] verified`);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
