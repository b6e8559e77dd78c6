import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { probe } from "./health.js";

describe("probe", () => {
  test("ok for a check that resolves", async () => {
    const report = await probe(async () => {}, 1000);
    assert.equal(report.status, "ok");
    assert.equal(report.error, undefined);
    assert.ok(report.latencyMs >= 0 && report.latencyMs < 1000, String(report.latencyMs));
  });

  test("ok for a check that resolves shortly before the deadline, with its latency", async () => {
    const report = await probe(() => new Promise<void>((resolve) => setTimeout(resolve, 20)), 500);
    assert.equal(report.status, "ok");
    assert.ok(report.latencyMs >= 15, String(report.latencyMs));
  });

  test("down with the error message for a check that rejects", async () => {
    const report = await probe(async () => {
      throw new Error("connection refused");
    }, 1000);
    assert.equal(report.status, "down");
    assert.equal(report.error, "connection refused");
  });

  test("down for a check that throws synchronously or rejects with a non-Error", async () => {
    const sync = await probe(() => {
      throw new Error("sync failure");
    }, 1000);
    assert.equal(sync.status, "down");
    assert.equal(sync.error, "sync failure");

    const text = await probe(() => Promise.reject("plain text"), 1000);
    assert.equal(text.status, "down");
    assert.equal(text.error, "plain text");
  });

  test("down within about the timeout for a check that never settles", async () => {
    const started = performance.now();
    const report = await probe(() => new Promise<void>(() => {}), 50);
    const took = performance.now() - started;
    assert.equal(report.status, "down");
    assert.match(report.error ?? "", /50 ms/);
    assert.ok(took >= 45 && took < 500, `took ${took} ms`);
    assert.ok(report.latencyMs >= 45 && report.latencyMs < 500, String(report.latencyMs));
  });

  test("a check that finishes does not keep a timer alive", async () => {
    // With a 10 s timeout, a leaked timer would keep this file running for 10 s; the
    // file-level duration catches that, and the report must come back at once.
    const started = performance.now();
    const report = await probe(async () => {}, 10_000);
    assert.equal(report.status, "ok");
    assert.ok(performance.now() - started < 100);
  });
});
