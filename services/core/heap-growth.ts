import { setFlagsFromString } from "node:v8";

/** The old generation may grow to three times its live size before the next mark-compact. */
const HEAP_GROWING_PERCENT = 200;

/**
 * Fixes V8's heap growing factor at 1 + HEAP_GROWING_PERCENT / 100 for every
 * thread of the process, unless the command line sets `--heap-growing-percent`.
 *
 * V8 lets the old generation grow, before its next mark-compact, by a factor
 * chosen from how fast the thread's old generation grew: from 1.1 for one that
 * hardly grows up to 4. The Kafka producer thread is that case: its records
 * live a few milliseconds, its old generation stays at its live size, so the
 * factor drops to 1.1. The limit then lies less than a young generation above
 * the live size, and V8 starts the next incremental marking as soon as the
 * last mark-compact ends: that thread marks almost all the time, and the
 * concurrent marking's helper threads with it. A fixed factor of 3 (with the
 * producer thread's young generation capped, KafkaThread) leaves room for
 * several young generations between mark-compacts on every thread, the
 * aggregator's included, which a factor of 2 did not. The figures, and what
 * was tried: bench/README.md, "Heap growing factor".
 */
export function fixHeapGrowingFactor(): void {
  if (process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
