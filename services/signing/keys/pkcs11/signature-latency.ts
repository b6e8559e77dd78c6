/**
 * Whether a thread should wait for its token's signatures synchronously
 * (C_Sign) or hand them to libuv's thread pool (C_SignAsync), from how long
 * they take. A token that answers within a millisecond or two (SoftHSM2, a
 * PCIe HSM) is fastest asked directly: the hand-over to the pool and back
 * costs about as much as the signature. A network HSM that takes tens of
 * milliseconds would hold the thread that long per signature, with nothing
 * else done meanwhile and one signature at a time; through the pool, the
 * thread goes on with other documents and several signatures run at once.
 */
export class SignatureLatency {
  /** Moving average of the last signatures' time, ms; undefined before the first. */
  #averageMs: number | undefined;
  #synchronous = true;

  /** Above this average, signatures go to the thread pool. */
  static readonly SLOW_MS = 5;
  /** Below this average, back to C_Sign: the pool's hand-over is in the average, and this gap keeps the choice from flapping. */
  static readonly FAST_MS = 2.5;
  /** Weight of the newest signature in the average. */
  static readonly WEIGHT = 0.2;

  get synchronous(): boolean {
    return this.#synchronous;
  }

  record(ms: number): void {
    this.#averageMs = this.#averageMs === undefined ? ms : this.#averageMs + SignatureLatency.WEIGHT * (ms - this.#averageMs);
    if (this.#synchronous && this.#averageMs > SignatureLatency.SLOW_MS) this.#synchronous = false;
    else if (!this.#synchronous && this.#averageMs < SignatureLatency.FAST_MS) this.#synchronous = true;
  }
}
