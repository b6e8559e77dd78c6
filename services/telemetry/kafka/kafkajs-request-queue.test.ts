// kafkajs 2.2.4 is patched (patches/kafkajs+2.2.4.patch, applied by npm's
// postinstall): unpatched, every broker connection re-armed a 1 ms timer
// forever, idle or not. These tests fail if the patch is not applied, and
// check that what the timer is for, releasing requests held back by
// broker throttling, still happens.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";

interface QueueInternals {
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  push(request: { entry: { correlationId: number; resolve(): void; reject(): void }; expectResponse: boolean; sendRequest(): void }): void;
  destroy(): void;
}

const RequestQueue = createRequire(import.meta.url)("kafkajs/src/network/requestQueue/index.js") as new (options: object) => QueueInternals;
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const queue = () =>
  new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: "test", broker: "127.0.0.1:9092", logger: silent });

describe("kafkajs request queue (patched)", () => {
  test("an idle, unthrottled connection arms no timer", () => {
    const idle = queue();
    idle.checkPendingRequests();
    assert.equal(idle.throttleCheckTimeoutId, null);
    idle.destroy();
  });

  test("a request held back by throttling is sent when the throttle ends", async () => {
    const throttled = queue();
    throttled.throttledUntil = Date.now() + 50;
    let sent = 0;
    throttled.push({ entry: { correlationId: 1, resolve() {}, reject() {} }, expectResponse: false, sendRequest: () => sent++ });
    assert.equal(sent, 0);
    assert.notEqual(throttled.throttleCheckTimeoutId, null);
    await sleep(150);
    assert.equal(sent, 1);
    throttled.destroy();
  });
});
