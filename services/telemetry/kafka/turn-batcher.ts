export interface TurnBatcherLimits {
  /** Hand the batch over once its items weigh this much (records, for writes). */
  maxWeight: number;
  /** Hand the batch over once this many milliseconds passed since its first item. */
  maxWaitMs: number;
}

/**
 * Gathers the items added in one turn of the event loop and hands them over
 * together at the turn's end, or earlier once the batch reaches `maxWeight` or
 * has waited `maxWaitMs`. A busy turn then hands over in a few pieces, and
 * whoever receives them starts on the first while the rest are still being
 * added.
 */
export class TurnBatcher<T> {
  private items: T[] = [];
  private weight = 0;
  private since = 0;

  constructor(
    private readonly limits: TurnBatcherLimits,
    private readonly weightOf: (item: T) => number,
    private readonly handOver: (items: T[]) => void,
  ) {}

  add(item: T): void {
    if (this.items.push(item) === 1) {
      this.since = performance.now();
      setImmediate(() => this.flush());
    }
    this.weight += this.weightOf(item);
    if (this.weight >= this.limits.maxWeight || performance.now() - this.since >= this.limits.maxWaitMs) this.flush();
  }

  private flush(): void {
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.weight = 0;
    this.handOver(items);
  }
}
