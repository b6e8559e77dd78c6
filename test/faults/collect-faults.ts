/**
 * npm run faults:collect — the full fault matrix of test/faults/collect-fault-matrix.ts:
 * 20 s of load around each fault, the broker down 20 s after its SIGKILL and
 * paused 10 s; prints the table (also in bench/README.md) and exits 1 unless every
 * round is exact. `npm test` runs a shortened one (test/integration/collect-faults.test.ts).
 */
import { FAULTS, TABLE_HEADER, runCollectFaultMatrix, type Fault } from "./collect-fault-matrix.js";

const only = process.argv.slice(2) as Fault[];
const unknown = only.filter((fault) => !FAULTS.includes(fault));
if (unknown.length > 0) {
  console.error(`unknown fault(s) ${unknown.join(", ")}; known: ${FAULTS.join(", ")}`);
  process.exit(2);
}

console.log(TABLE_HEADER);
const results = await runCollectFaultMatrix(
  { loadSeconds: 10, kafkaDownSeconds: 20, kafkaPauseSeconds: 10, directTimeoutMs: 1000, connections: 16, convergeTimeoutSeconds: 180, log: (line) => console.log(line) },
  only.length > 0 ? only : FAULTS,
);
process.exit(results.every((r) => r.exact) ? 0 : 1);
