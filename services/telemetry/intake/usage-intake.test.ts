// UsageIntake's close: the spool is handed to the sink before the process
// goes (a pod's data directory goes with it), for up to its hand-over time;
// what the sink cannot take by then stays on disk for the next start. The
// spool is the real one; the sink is a switch between refusing and taking
// writes, as Kafka away and back looks to the intake.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { createLogger } from "../../core/logger.js";
import type { UsageRecord } from "../usage-record.js";
import type { RecordSink } from "./record-sink.js";
import { NO_REPLAY_GUARD } from "./replay-guard.js";
import { Spool } from "./spool.js";
import { spooledRecord } from "./test/spooled-record.js";
import { UsageIntake } from "./usage-intake.js";

const root = mkdtempSync(join(tmpdir(), "docservice-intake-"));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const logger = createLogger("silent");

const record = spooledRecord;

/** A sink that refuses every write until `available`, then keeps what it is given. */
class SwitchedSink implements RecordSink {
  available = false;
  readonly written: string[] = [];
  async write(records: UsageRecord[]): Promise<void> {
    if (!this.available) throw new Error("broker unreachable");
    this.written.push(...records.map((r) => r.eventId));
  }
}

/** An intake over a fresh spool whose events were all spooled (the sink refused them). */
async function intakeWithSpooled(events: number, handOverMs: number) {
  const directory = join(root, String(++dirs));
  const sink = new SwitchedSink();
  const intake = new UsageIntake(sink, NO_REPLAY_GUARD, Spool.open(directory, { maxBytes: 1 << 20 }), { directTimeoutMs: 50, retryDirectAfterMs: 60_000, handOverMs }, logger);
  for (let n = 0; n < events; n++) await intake.accept([record(n)]);
  assert.ok(intake.spooledBytes > 0, "the events were spooled");
  return { directory, sink, intake };
}

describe("UsageIntake close", () => {
  test("hands the spool to the sink when it comes back during the hand-over: every event once, nothing left on disk", async () => {
    const { directory, sink, intake } = await intakeWithSpooled(20, 10_000);
    setTimeout(() => (sink.available = true), 1500);
    const started = Date.now();
    await intake.close();
    assert.ok(Date.now() - started < 9000, "close returned once the spool was delivered, before its hand-over time");
    assert.deepEqual([...sink.written].sort(), Array.from({ length: 20 }, (_, n) => `event-${n}`).sort());
    const reopened = Spool.open(directory, { maxBytes: 1 << 20 });
    assert.equal(reopened.isEmpty, true);
    await reopened.close();
  });

  test("a sink that stays away: close returns after the hand-over time and the events wait on disk for the next start", async () => {
    const { directory, sink, intake } = await intakeWithSpooled(5, 1200);
    const started = Date.now();
    await intake.close();
    const took = Date.now() - started;
    assert.ok(took >= 1000 && took < 5000, `close took ${took} ms`);
    assert.deepEqual(sink.written, []);
    const reopened = Spool.open(directory, { maxBytes: 1 << 20 });
    const kept: string[] = [];
    for (let segment = await reopened.oldest(); segment; segment = await reopened.oldest()) {
      kept.push(...segment.records.map((r) => r.eventId));
      await segment.remove();
    }
    assert.deepEqual(kept, Array.from({ length: 5 }, (_, n) => `event-${n}`));
    await reopened.close();
  });
});
