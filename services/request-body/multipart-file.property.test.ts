import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import { ServiceError } from "../core/errors.js";
import { readMultipartFile, type UploadedFile } from "./multipart-file.js";

// Property tests of the multipart reader behind POST /v1/convert, through a real node:http
// server on loopback: generated forms (any boundary, parts, names, file names and bytes), sent
// whole, cut short (the HTTP body complete but the form unfinished, or the connection dropped
// mid-upload), split into pieces, or not multipart at all. Every request gets the file or a
// 4xx ServiceError within a time bound, and the process survives every one of them.

const NUM_RUNS = 150;
const MAX_BYTES = 4096;
const TIME_BOUND_MS = 5000;

type Outcome = { file: UploadedFile } | { error: unknown };

interface Part {
  kind: "file" | "field";
  name: string;
  filename: string;
  contentType: string;
  content: Uint8Array;
}

interface Form {
  boundary: string;
  parts: Part[];
  /** Appended after the last part instead of the closing boundary when set (garbage, or nothing). */
  ending: "close" | "none" | "garbage";
}

const BOUNDARY_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?";
const boundary = fc.string({ unit: fc.constantFrom(...BOUNDARY_CHARS), minLength: 1, maxLength: 70 });
/** File names as browsers send them: raw UTF-8, no quote, backslash, slash or control character. */
const filename = fc.string({ unit: "grapheme", maxLength: 30 }).map((name) => name.replace(/["\\/\p{Cc}]/gu, "")).filter((name) => name.length > 0);
const part: fc.Arbitrary<Part> = fc.record({
  kind: fc.constantFrom("file", "field"),
  name: fc.oneof(fc.constant("file"), fc.constant("other"), fc.string({ unit: fc.constantFrom(..."abcXYZ_-09"), minLength: 1, maxLength: 8 })),
  filename,
  contentType: fc.constantFrom("application/octet-stream", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "text/plain; charset=utf-8"),
  content: fc.oneof(fc.uint8Array({ maxLength: 2 * MAX_BYTES }), fc.constantFrom(new TextEncoder().encode("--\r\n--x--\r\n"), new Uint8Array(0))),
});
const form: fc.Arbitrary<Form> = fc.record({
  boundary,
  parts: fc.array(part, { maxLength: 4 }),
  ending: fc.constantFrom("close", "close", "close", "none", "garbage"),
});

function encode({ boundary, parts, ending }: Form): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = p.kind === "file" ? `form-data; name="${p.name}"; filename="${p.filename}"` : `form-data; name="${p.name}"`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${p.contentType}\r\n\r\n`, "utf8"), Buffer.from(p.content), Buffer.from("\r\n"));
  }
  if (ending === "close") chunks.push(Buffer.from(`--${boundary}--\r\n`));
  if (ending === "garbage") chunks.push(Buffer.from("--garbage"));
  return Buffer.concat(chunks);
}

/** The one answer a well-formed form must get: the file, when it is exactly one file part named "file" within the limit. */
function expected(f: Form): { filename: string; content: Uint8Array } | undefined {
  if (f.ending !== "close" || f.parts.length !== 1) return undefined;
  const [only] = f.parts;
  if (only!.kind !== "file" || only!.name !== "file" || only!.content.length > MAX_BYTES) return undefined;
  // a boundary line inside the content ends the part early
  if (Buffer.from(only!.content).includes(`\r\n--${f.boundary}`)) return undefined;
  return only;
}

type Delivery =
  | { mode: "whole"; pieces: number[] }
  | { mode: "chunked-cut"; at: number } // HTTP body complete (chunked), the form cut at `at`
  | { mode: "dropped"; at: number } // Content-Length of the whole form, the connection closed after `at` bytes
  | { mode: "wrong-type"; contentType: string };

const delivery: fc.Arbitrary<Delivery> = fc.oneof(
  fc.record({ mode: fc.constant("whole" as const), pieces: fc.array(fc.nat(), { maxLength: 4 }) }),
  fc.record({ mode: fc.constant("chunked-cut" as const), at: fc.nat() }),
  fc.record({ mode: fc.constant("dropped" as const), at: fc.nat() }),
  fc.record({ mode: fc.constant("wrong-type" as const), contentType: fc.constantFrom("multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=\"unterminated", "multipart/mixed; boundary=x", "application/json", "") }),
);

describe("readMultipartFile over real HTTP (fast-check)", () => {
  let server: Server;
  let port: number;
  const waiting = new Map<string, (outcome: Outcome) => void>();
  let next = 0;

  before(async () => {
    server = createServer((request, response) => {
      const id = String(request.headers["x-case"]);
      readMultipartFile(request, "file", MAX_BYTES, MAX_BYTES + 64 * 1024).then(
        (file) => {
          waiting.get(id)?.({ file });
          response.end("ok");
        },
        (error: unknown) => {
          waiting.get(id)?.({ error });
          response.statusCode = error instanceof ServiceError ? error.httpStatus : 500;
          response.end();
        },
      );
    });
    server.on("clientError", (_error, socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Sends the form as `how` says over a raw socket; resolves with what the reader decided. */
  async function send(body: Buffer, contentType: string, how: Delivery): Promise<Outcome> {
    const id = String(next++);
    const outcome = new Promise<Outcome>((resolve) => waiting.set(id, resolve));
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const head = (extra: string) => `POST /v1/convert HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Case: ${id}\r\n${contentType ? `Content-Type: ${contentType}\r\n` : ""}${extra}\r\n`;
    if (how.mode === "whole" || how.mode === "wrong-type") {
      socket.write(head(`Content-Length: ${body.length}\r\n`));
      let offset = 0;
      for (const piece of how.mode === "whole" ? how.pieces : []) {
        const end = Math.min(body.length, offset + (piece % 512) + 1);
        socket.write(body.subarray(offset, end));
        offset = end;
        await sleep(1);
      }
      socket.write(body.subarray(offset));
    } else if (how.mode === "chunked-cut") {
      const cut = body.subarray(0, how.at % (body.length + 1));
      socket.write(head("Transfer-Encoding: chunked\r\n"));
      if (cut.length > 0) socket.write(`${cut.length.toString(16)}\r\n${cut.toString("latin1")}\r\n`, "latin1");
      socket.write("0\r\n\r\n");
    } else {
      socket.write(head(`Content-Length: ${body.length + 1}\r\n`));
      socket.write(body.subarray(0, how.at % (body.length + 1)));
      await sleep(5);
      socket.destroy();
    }
    const timer = sleep(TIME_BOUND_MS, "timeout" as const);
    const result = await Promise.race([outcome, timer]);
    socket.destroy();
    waiting.delete(id);
    assert.notEqual(result, "timeout", `no answer within ${TIME_BOUND_MS} ms (${how.mode})`);
    return result as Outcome;
  }

  test("any form, whole, split, cut short or dropped: the file or a 4xx, in time, and the process survives", async () => {
    await fc.assert(
      fc.asyncProperty(form, delivery, async (f, how) => {
        const body = encode(f);
        const contentType = how.mode === "wrong-type" ? how.contentType : `multipart/form-data; boundary=${/^[\w'+.-]+$/.test(f.boundary) ? f.boundary : `"${f.boundary}"`}` // quoted when it holds a tspecial;
        const outcome = await send(body, contentType, how);
        if ("error" in outcome) {
          const { error } = outcome;
          assert.ok(error instanceof ServiceError, `not a ServiceError: ${(error as Error)?.stack ?? String(error)}`);
          assert.ok(error.httpStatus >= 400 && error.httpStatus < 500, `${error.code} ${error.message}`);
        }
        const wanted = expected(f);
        if (how.mode === "whole" && wanted) {
          assert.ok("file" in outcome, `a well-formed upload was refused: ${"error" in outcome ? (outcome.error as Error).message : ""}`);
          assert.equal(outcome.file.filename, wanted.filename);
          assert.deepEqual(new Uint8Array(outcome.file.bytes), wanted.content);
        }
        if (how.mode === "chunked-cut" && f.ending === "close" && how.at % (body.length + 1) < body.length - 2 && f.parts.some((p) => p.kind === "file" && p.name === "file")) {
          // cut before the closing boundary: the form ended early
          if ("file" in outcome) assert.ok(wanted === undefined || Buffer.compare(Buffer.from(outcome.file.bytes), Buffer.from(wanted.content)) !== 0 || how.at % (body.length + 1) >= body.length - `--${f.boundary}--\r\n`.length, "a cut form returned the whole file");
        }
      }),
      { numRuns: NUM_RUNS },
    );
    // still serving after all of it
    const outcome = await send(encode({ boundary: "b", parts: [{ kind: "file", name: "file", filename: "a.docx", contentType: "application/octet-stream", content: new Uint8Array([1, 2, 3]) }], ending: "close" }), "multipart/form-data; boundary=b", { mode: "whole", pieces: [] });
    assert.ok("file" in outcome);
    assert.deepEqual([...outcome.file.bytes], [1, 2, 3]);
  });
});
