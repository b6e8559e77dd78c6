/**
 * A level-triggered work queue keyed by namespace/name: a key queued several
 * times before it runs runs once; a key is never handled by two workers at
 * once (queued again while running, it runs again after); a failed key is
 * retried after a per-key exponential delay; every key seen is re-queued on
 * a periodic resync.
 */
export interface WorkQueueOptions {
  /** Handles one key; a rejection schedules a retry. */
  handle(key: string): Promise<void>;
  /** Keys handled at once. */
  concurrency: number;
  baseRetryMs: number;
  maxRetryMs: number;
  /** 0 disables the periodic resync. */
  resyncMs: number;
  onError?(key: string, error: unknown, retryInMs: number): void;
}

export class WorkQueue {
  private readonly queued = new Set<string>();
  private readonly running = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private readonly known = new Set<string>();
  private readonly resyncTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private pumpScheduled = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: WorkQueueOptions) {
    if (options.resyncMs > 0) {
      this.resyncTimer = setInterval(() => this.known.forEach((key) => this.add(key)), options.resyncMs);
      this.resyncTimer.unref();
    }
  }

  add(key: string): void {
    if (this.stopped) return;
    this.known.add(key);
    if (this.running.has(key)) {
      this.dirty.add(key);
      return;
    }
    this.queued.add(key);
    this.schedulePump();
  }

  /** Stops resyncing a key (its resource is gone). */
  forget(key: string): void {
    this.known.delete(key);
    this.failures.delete(key);
    clearTimeout(this.retryTimers.get(key));
    this.retryTimers.delete(key);
  }

  /** Resolves when nothing is queued, running or waiting for a retry. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.resyncTimer);
    this.retryTimers.forEach((timer) => clearTimeout(timer));
    this.retryTimers.clear();
    this.queued.clear();
  }

  /** On the next microtask, so keys added in one go are coalesced before any runs. */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    for (const key of this.queued) {
      if (this.running.size >= this.options.concurrency) return;
      this.queued.delete(key);
      this.running.add(key);
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    try {
      await this.options.handle(key);
      this.failures.delete(key);
    } catch (error) {
      const attempts = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempts);
      const delay = Math.min(this.options.maxRetryMs, this.options.baseRetryMs * 2 ** (attempts - 1));
      this.options.onError?.(key, error, delay);
      clearTimeout(this.retryTimers.get(key));
      const timer = setTimeout(() => {
        this.retryTimers.delete(key);
        this.add(key);
      }, delay);
      this.retryTimers.set(key, timer);
    } finally {
      this.running.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      this.pump();
      if (this.isIdle()) this.idleWaiters.splice(0).forEach((resolve) => resolve());
    }
  }

  private isIdle(): boolean {
    return !this.pumpScheduled && this.queued.size === 0 && this.running.size === 0 && this.retryTimers.size === 0;
  }
}
