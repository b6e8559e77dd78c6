// The shortened fault matrix (test/faults/collect-fault-matrix.ts): every
// single fault of the usage pipeline under load, in split mode with a real
// Kafka and Redis, a few seconds each; `npm run faults:collect` is the full one.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TABLE_HEADER, formatRound, runCollectFaultMatrix } from "../faults/collect-fault-matrix.js";

test("usage through single faults under load: every acknowledged event counted once, distinct documents exact", async () => {
  const results = await runCollectFaultMatrix({
    loadSeconds: 2,
    kafkaDownSeconds: 3,
    kafkaPauseSeconds: 2,
    directTimeoutMs: 500,
    connections: 4,
    convergeTimeoutSeconds: 120,
    log: () => {},
  });
  const table = [TABLE_HEADER, ...results.map(formatRound)].join("\n");
  console.log(table);
  for (const result of results) {
    assert.ok(result.acknowledged > 0, `${result.fault}: no report was acknowledged\n${table}`);
    assert.ok(result.exact, `${result.fault} is not exact\n${table}`);
    if (result.fault !== "telemetry-kill") assert.equal(result.inDoubt, 0);
  }
  // the killed aggregator's partitions move after its 10 s session timeout (27 s with kafkajs' default 30 s)
  const aggregatorKill = results.find((result) => result.fault === "aggregator-kill")!;
  assert.ok(aggregatorKill.convergeSeconds! < 20, `the aggregator's partitions moved late\n${table}`);
});
