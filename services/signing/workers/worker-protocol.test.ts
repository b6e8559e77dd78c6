import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
import { transferList } from "./worker-protocol.js";

describe("transferList", () => {
  test("moves bytes that fill their ArrayBuffer, never a pooled Buffer or a view into a larger one", () => {
    const own = Buffer.allocUnsafeSlow(1000).fill(7);
    assert.deepEqual(transferList(own), [own.buffer]);
    assert.deepEqual(transferList(Buffer.from("small, pooled")), []);
    assert.deepEqual(transferList(own.subarray(1)), []);
    assert.deepEqual(transferList(own.subarray(0, 999)), []);
  });

  test("moved bytes arrive whole and are gone on the sending side", () => {
    const { port1, port2 } = new MessageChannel();
    const bytes = Buffer.allocUnsafeSlow(1 << 20).fill(42);
    port1.postMessage({ pdf: bytes }, transferList(bytes));
    const received = receiveMessageOnPort(port2)!.message as { pdf: Uint8Array };
    assert.equal(received.pdf.byteLength, 1 << 20);
    assert.ok(received.pdf.every((byte) => byte === 42));
    assert.equal(bytes.length, 0, "detached here");
    port1.close();
  });
});
