import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ServiceError } from "../core/errors.js";
import { documentSchema } from "./document-body.js";
import { Base64Decoder } from "./base64-field.js";
import { readJsonBodyWithBytes, type JsonWithBytes } from "./json-body.js";

// Property tests of the streaming reader behind POST /v1/sign and /v1/verify: for any body, cut
// into any chunks, the answer is what JSON.parse of the whole body and the standard base64 rule
// (the schema's own) give — the same value, with document.base64 replaced by a stand-in of the
// same verdict, and the same bytes Buffer.from(…, "base64") decodes — or, exactly when JSON.parse
// fails, the same 400.

const NUM_RUNS = 400;
const PATH = ["document", "base64"] as const;
const STAND_INS = { empty: "", valid: "AAAA", invalid: "=" };

function requestOf(chunks: Buffer[]): IncomingMessage {
  return Object.assign(Readable.from(chunks), { headers: { "content-type": "application/json" }, complete: true }) as unknown as IncomingMessage;
}

function chunked(body: Buffer, sizes: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < body.length; i++) {
    const size = sizes.length > 0 ? sizes[i % sizes.length] : body.length;
    chunks.push(body.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

type Outcome = JsonWithBytes | { error: string };

async function read(body: Buffer, sizes: number[]): Promise<Outcome> {
  try {
    const { value, bytes } = await readJsonBodyWithBytes(requestOf(chunked(body, sizes)), Math.max(body.length, 1), [...PATH]);
    return bytes ? { value, bytes } : { value };
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, "VALIDATION_ERROR");
    assert.match(error.message, /^The request body is not valid JSON: /);
    assert.deepEqual(error.details, [{ field: "body", issue: "is not valid JSON" }]);
    return { error: "not JSON" };
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** What reading the whole body at once gives: JSON.parse, then the schema's base64 rule on the string. */
function expected(body: Buffer): Outcome {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    return { error: "not JSON" };
  }
  const holder = isObject(value) && isObject(value.document) ? value.document : undefined;
  if (!holder || typeof holder.base64 !== "string") return { value };
  const text = holder.base64;
  const verdict = text === "" ? "empty" : documentSchema.safeParse({ base64: text }).success ? "valid" : "invalid";
  holder.base64 = STAND_INS[verdict];
  return verdict === "valid" ? { value, bytes: Buffer.from(text, "base64") } : { value };
}

/** JSON text with every string (keys too) written in one style: as JSON.stringify does, with "\/", or each character a \uXXXX escape. */
function writeJson(value: unknown, style: "plain" | "slashes" | "unicode", indent: boolean): string {
  const string = (text: string) =>
    style === "unicode"
      ? `"${Array.from({ length: text.length }, (_, i) => `\\u${text.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")}"`
      : style === "slashes"
        ? JSON.stringify(text).replaceAll("/", "\\/")
        : JSON.stringify(text);
  const space = indent ? "\n  " : "";
  const write = (v: unknown): string => {
    if (typeof v === "string") return string(v);
    if (Array.isArray(v)) return `[${space}${v.map(write).join(`,${space}`)}]`;
    if (isObject(v)) return `{${space}${Object.entries(v).map(([key, item]) => `${string(key)}:${indent ? " " : ""}${write(item)}`).join(`,${space}`)}}`;
    return JSON.stringify(v);
  };
  return write(value);
}

const BASE64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const validBase64 = fc.uint8Array({ maxLength: 120 }).map((bytes) => Buffer.from(bytes).toString("base64"));
/** Valid base64 with one character added, removed or replaced: padding inside, a foreign character, a wrong length. */
const nearlyBase64 = fc
  .tuple(validBase64, fc.nat(), fc.constantFrom(..."=A+/-_ \n\té\u0000\u001f\\\"\u2028"), fc.constantFrom("insert", "delete", "replace"))
  .map(([text, at, char, how]) => {
    const i = text.length === 0 ? 0 : at % text.length;
    if (how === "insert") return text.slice(0, i) + char + text.slice(i);
    if (how === "delete") return text.slice(0, i) + text.slice(i + 1);
    return text.slice(0, i) + char + text.slice(i + 1);
  });
const alphabetText = (maxLength: number) => fc.string({ unit: fc.constantFrom(...BASE64_CHARS), maxLength });
/** Any number of "=" after any length of text, sometimes with more text after them. */
const padded = fc
  .tuple(alphabetText(9), fc.integer({ min: 0, max: 4 }), fc.oneof(fc.constant(""), alphabetText(2)))
  .map(([text, padding, after]) => text + "=".repeat(padding) + after);
const base64Value = fc.oneof(validBase64, validBase64, nearlyBase64, padded, fc.string({ unit: fc.constantFrom(...BASE64_CHARS, "=") }), fc.string({ unit: "binary" }));

const others = fc.dictionary(fc.oneof(fc.constantFrom("signer", "auditTrail", "document", "x"), fc.string({ maxLength: 6 })), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
/** Bodies with a document.base64 somewhere near where it belongs: at its place, next to a url, nested too deep, in an array. */
const bodyValue = fc.oneof(
  fc.tuple(base64Value, others).map(([base64, rest]) => ({ ...rest, document: { base64 } })),
  fc.tuple(base64Value, others).map(([base64, rest]) => ({ document: { url: "https://example.test/a.pdf", base64 }, ...rest })),
  fc.tuple(base64Value, others).map(([base64, rest]) => ({ x: { document: { base64 } }, ...rest })),
  base64Value.map((base64) => [{ document: { base64 } }]),
  base64Value.map((base64) => ({ document: [base64], base64 })),
  fc.jsonValue({ maxDepth: 3 }),
);
const chunkSizes = fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 6 });

async function assertSame(body: Buffer, sizes: number[]): Promise<void> {
  const got = await read(body, sizes);
  const want = expected(body);
  assert.deepEqual(got, want, `body ${JSON.stringify(body.toString("latin1").slice(0, 300))}, chunks ${JSON.stringify(sizes)}`);
  if ("bytes" in got && got.bytes) assert.equal(got.bytes.buffer.byteLength, got.bytes.length, "the document fills its ArrayBuffer, so it can move to a worker");
}

describe("JSON body with a base64 document, read as it streams", () => {
  test("the decoder, given any string in any parts, judges it as the schema does and decodes it as Buffer.from does", () => {
    fc.assert(
      fc.property(base64Value, fc.array(fc.nat(), { maxLength: 5 }), (text, cuts) => {
        const decoder = new Base64Decoder(text.length);
        let from = 0;
        for (const cut of [...cuts.map((c) => c % (text.length + 1)).sort((a, b) => a - b), text.length]) {
          decoder.push(text.slice(from, cut));
          from = cut;
        }
        const { verdict, bytes } = decoder.finish();
        assert.equal(verdict, text === "" ? "empty" : documentSchema.safeParse({ base64: text }).success ? "valid" : "invalid", JSON.stringify(text));
        if (verdict === "valid") assert.ok(bytes!.equals(Buffer.from(text, "base64")), JSON.stringify(text));
      }),
      { numRuns: 20 * NUM_RUNS },
    );
  });

  test("any body, written in any string style and cut anywhere: what JSON.parse and the base64 rule say", async () => {
    await fc.assert(
      fc.asyncProperty(bodyValue, fc.constantFrom("plain", "slashes", "unicode"), fc.boolean(), chunkSizes, async (value, style, indent, sizes) => {
        await assertSame(Buffer.from(writeJson(value, style as "plain", indent)), sizes);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("a body broken anywhere (a byte inserted, changed or the end cut off) is refused exactly when JSON.parse refuses it", async () => {
    const damage = fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom("insert", "replace", "cut"));
    await fc.assert(
      fc.asyncProperty(bodyValue, fc.constantFrom("plain", "slashes", "unicode"), damage, chunkSizes, async (value, style, [at, byte, how], sizes) => {
        const body = Buffer.from(writeJson(value, style as "plain", false));
        const i = at % (body.length + 1);
        const damaged =
          how === "cut" ? body.subarray(0, i) : Buffer.concat([body.subarray(0, i), Buffer.of(byte), body.subarray(how === "insert" ? i : i + 1)]);
        await assertSame(damaged, sizes);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("the same key twice: the last one counts, as in JSON.parse", async () => {
    const a = Buffer.from("first document").toString("base64");
    const b = Buffer.from("second document").toString("base64");
    for (const text of [
      `{"document":{"base64":"${a}","base64":"${b}"}}`,
      `{"document":{"base64":"${a}"},"document":{"base64":"${b}"}}`,
      `{"document":{"base64":"${a}"},"document":{"url":"https://example.test/"}}`,
      `{"document":{"base64":"${a}"},"document":{"base64":"not base64"}}`,
      `{"document":{"base64":"${a}","base64":7}}`,
      `{"docum\\u0065nt":{"b\\u0061se64":"${a}"},"document":{"base64":"${b}"}}`,
    ]) {
      for (const sizes of [[], [1], [5, 3]]) await assertSame(Buffer.from(text), sizes);
    }
  });

  test("a document of several megabytes, in network-sized chunks: every byte, in one buffer of its own", async () => {
    const document = randomBytes(3 * 1024 * 1024 + 2);
    const body = Buffer.from(JSON.stringify({ signer: { name: "Jane" }, document: { base64: document.toString("base64") }, auditTrail: [] }));
    for (const sizes of [[65536], [65537, 1000, 3]]) {
      const { value, bytes } = (await read(body, sizes)) as JsonWithBytes;
      assert.deepEqual(value, { signer: { name: "Jane" }, document: { base64: "AAAA" }, auditTrail: [] });
      assert.ok(bytes!.equals(document));
      assert.equal(bytes!.byteOffset, 0);
      assert.equal(bytes!.buffer.byteLength, document.length);
    }
  });

  test("a body over the limit is a 413, wherever the document is", async () => {
    const body = Buffer.from(JSON.stringify({ document: { base64: randomBytes(3000).toString("base64") } }));
    await assert.rejects(readJsonBodyWithBytes(requestOf(chunked(body, [100])), body.length - 1, [...PATH]), (error: unknown) => {
      return error instanceof ServiceError && error.code === "PAYLOAD_TOO_LARGE";
    });
  });
});
