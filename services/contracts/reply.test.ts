import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { JsonWithBase64, sendReply } from "./reply.js";

const BEFORE = '{"document":{"base64":"';
const AFTER = '","contentType":"application/pdf"}}';
const asJson = (bytes: Buffer) => JSON.stringify({ document: { base64: bytes.toString("base64"), contentType: "application/pdf" } });

describe("JsonWithBase64", () => {
  test("its pieces are the JSON text JSON.stringify writes, and its length is that text's", () => {
    const piece = 3 * 16 * 1024;
    for (const size of [0, 1, 2, 3, 4, piece - 1, piece, piece + 1, 2 * piece + 2]) {
      const bytes = randomBytes(size);
      const body = new JsonWithBase64(BEFORE, bytes, AFTER);
      const text = [...body.pieces()].join("");
      assert.equal(text, asJson(bytes), `${size} bytes`);
      assert.equal(body.byteLength, Buffer.byteLength(text));
    }
  });

  test("over HTTP: the whole body with its Content-Length; a client leaving mid-answer ends the writing quietly", async () => {
    const bytes = randomBytes(4 * 1024 * 1024 + 1);
    const sent: Promise<void>[] = [];
    const server = createServer((_request, response) => {
      sent.push(sendReply(response, { status: 200, body: new JsonWithBase64(BEFORE, bytes, AFTER) }, "request-1"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const response = await fetch(url);
      assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8");
      assert.equal(response.headers.get("x-request-id"), "request-1");
      const text = await response.text();
      assert.equal(Number(response.headers.get("content-length")), text.length);
      assert.equal(text, asJson(bytes));

      // read the head and a little of the body, then hang up
      await new Promise<void>((resolve) => {
        const request = httpRequest(url, (answer) => answer.once("data", () => (request.destroy(), resolve())));
        request.end();
      });
      await Promise.all(sent);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
