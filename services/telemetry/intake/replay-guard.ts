import type { LogPosition } from "./log-position.js";

/**
 * What keeps a write whose outcome was never learned (the broker or the
 * process died mid-write, or it outlived its deadline) from being counted
 * twice when it is replayed from the spool: the log's position before the
 * write, kept with the spooled records, and, before the replay, which of them
 * are in the log after that position already.
 */
export interface ReplayGuard {
  /** The log's position now, as far as is known without asking (never ahead of the truth). */
  position(): LogPosition;
  /** Of `eventIds`, those already in the log after `since`. */
  alreadyLogged(eventIds: string[], since: LogPosition): Promise<string[]>;
}

/** For a sink that applies each eventId once by itself (the usage store without Kafka): nothing to read back. */
export const NO_REPLAY_GUARD: ReplayGuard = {
  position: () => ({}),
  alreadyLogged: async () => [],
};
