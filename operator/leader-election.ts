/**
 * Leader election on a coordination.k8s.io Lease, so two operator replicas
 * never both reconcile. A replica takes the lease when it is free or expired
 * (renewTime + leaseDuration in the past), renews it while leading, and
 * steps down when a renewal fails past the deadline. Writes carry the lease's
 * resourceVersion, so of two replicas racing for it, the API server lets one win.
 */
export interface LeaseRecord {
  holder: string | undefined;
  /** Milliseconds since the epoch. */
  renewTime: number;
  durationSeconds: number;
  transitions: number;
  resourceVersion?: string;
}

/** How the lease is read and written (the Kubernetes adapter is in lease-store.ts). */
export interface LeaseStore {
  read(): Promise<LeaseRecord | undefined>;
  /** Creates the lease; false when it already exists. */
  create(record: LeaseRecord): Promise<boolean>;
  /** Replaces the lease if its resourceVersion still matches; false when someone else wrote it first. */
  replace(record: LeaseRecord): Promise<boolean>;
}

export interface LeaderElectionOptions {
  identity: string;
  leaseDurationSeconds: number;
  /** How often the leader renews and a follower retries. */
  retryPeriodMs: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  now?: () => number;
}

export class LeaderElection {
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private lastRenewed = 0;
  private readonly now: () => number;

  constructor(
    private readonly store: LeaseStore,
    private readonly options: LeaderElectionOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    const tick = async () => {
      await this.tryAcquireOrRenew().catch(() => {});
      this.timer = setTimeout(tick, this.options.retryPeriodMs);
    };
    void tick();
  }

  /** Stops, and gives the lease up when leading so another replica takes over at once. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.leading) return;
    const current = await this.store.read().catch(() => undefined);
    if (current?.holder === this.options.identity) {
      await this.store.replace({ ...current, holder: undefined, renewTime: 0 }).catch(() => false);
    }
    this.setLeading(false);
  }

  /** One round: returns whether this replica leads afterwards. An API failure rejects (after stepping down if the lease ran out). */
  async tryAcquireOrRenew(): Promise<boolean> {
    try {
      return await this.round();
    } catch (error) {
      this.maybeStepDown();
      throw error;
    }
  }

  private async round(): Promise<boolean> {
    const { identity, leaseDurationSeconds } = this.options;
    const now = this.now();
    const current = await this.store.read();
    const fresh: LeaseRecord = { holder: identity, renewTime: now, durationSeconds: leaseDurationSeconds, transitions: 0 };
    let won: boolean;
    if (!current) {
      won = await this.store.create(fresh);
    } else if (current.holder === identity) {
      won = await this.store.replace({ ...current, renewTime: now, durationSeconds: leaseDurationSeconds });
    } else if (!current.holder || current.renewTime + current.durationSeconds * 1000 < now) {
      won = await this.store.replace({ ...fresh, transitions: current.transitions + 1, resourceVersion: current.resourceVersion });
    } else {
      won = false;
    }
    if (won) {
      this.lastRenewed = now;
      this.setLeading(true);
    } else if (current?.holder && current.holder !== identity) {
      this.setLeading(false); // someone else holds a live lease
    } else {
      this.maybeStepDown();
    }
    return this.leading;
  }

  /** A leader that could not renew within the lease duration must assume someone else leads now. */
  private maybeStepDown(): void {
    if (this.leading && this.now() - this.lastRenewed >= this.options.leaseDurationSeconds * 1000) this.setLeading(false);
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }
}
