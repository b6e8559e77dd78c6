import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createLogger } from "../core/logger.js";
import { UnoserverInstance } from "./unoserver-instance.js";

test("an unoserver that cannot be started fails start() at once, and kill() returns (no hang on shutdown)", async () => {
  const directory = mkdtempSync(join(tmpdir(), "unoserver-missing-"));
  try {
    let unexpectedExits = 0;
    const instance = new UnoserverInstance(1, { unoserverBin: join(directory, "no-such-unoserver"), directory, startTimeoutMs: 60_000, logger: createLogger("silent") }, () => unexpectedExits++);
    const started = Date.now();
    await assert.rejects(instance.start(), /did not start/);
    assert.ok(Date.now() - started < 5_000, `gave up after ${Date.now() - started} ms, not at the 60 s start timeout`);
    await instance.kill();
    assert.equal(instance.pid, undefined);
    assert.equal(unexpectedExits, 0);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
