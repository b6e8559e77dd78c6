/**
 * What was worked out about the texts of recent pages. What every page repeats
 * (labels, headings, the signer of a busy integration) stays; what one document
 * brought (its ID, hash and times) goes after a while, so the cache neither
 * grows with the documents signed nor forgets the page's own words. Two
 * generations: a hit in the older one brings the entry into the current one,
 * and a full current generation becomes the older one, dropping the one before.
 */
export class RecentCache<V> {
  #current = new Map<string, V>();
  #older = new Map<string, V>();

  constructor(private readonly generationSize: number) {}

  get(key: string): V | undefined {
    const value = this.#current.get(key);
    if (value !== undefined) return value;
    const older = this.#older.get(key);
    if (older !== undefined) this.set(key, older);
    return older;
  }

  /** Stores `value` and returns it. */
  set(key: string, value: V): V {
    if (this.#current.size >= this.generationSize) {
      this.#older = this.#current;
      this.#current = new Map();
    }
    this.#current.set(key, value);
    return value;
  }
}
