import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * Minor garbage collections paced by the bytes of large bodies that pass
 * through this thread.
 *
 * Each socket read of a request, and each piece of an answer written, is a
 * buffer outside V8's heap that is garbage once handed on, yet freed only
 * when V8 next collects its young generation. V8 paces those collections by
 * its heap's own allocation, which such buffers barely touch (their objects
 * are a few bytes each), and lets memory outside the heap grow by some 64 MB
 * before it steps in. So the first large request on a process left its whole
 * body and answer (38 MB of base64 each way for a 28.5 MB PDF) in malloc's
 * heap until it ended, and the process's resident size rose by 2–3.8× the
 * document where later requests rose by 1×. A scavenge of a young generation
 * that is mostly garbage takes about a millisecond; one per
 * {@link COLLECT_EVERY_BYTES} keeps that garbage under it, and costs small
 * requests nothing (bench/README.md, "Resident memory of a large sign
 * request").
 */
const COLLECT_EVERY_BYTES = 8 * 1024 * 1024;

type CollectGarbage = (options: { type: "minor" }) => void;

/** `gc` for this module alone (unless the process was started with --expose-gc): exposed in a context of its own, then the flag is set back. */
function garbageCollector(): CollectGarbage {
  const global = (globalThis as { gc?: CollectGarbage }).gc;
  if (global) return global;
  setFlagsFromString("--expose-gc");
  try {
    return runInNewContext("gc") as CollectGarbage;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}

const collectGarbage = garbageCollector();

let passedSinceCollection = 0;

/** `bytes` of a body went through this thread in buffers now garbage: collect them once enough have. */
export function passedThrough(bytes: number): void {
  passedSinceCollection += bytes;
  if (passedSinceCollection < COLLECT_EVERY_BYTES) return;
  passedSinceCollection = 0;
  collectGarbage({ type: "minor" });
}
