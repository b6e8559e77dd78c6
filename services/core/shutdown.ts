import type { Logger } from "./logger.js";

export type Stop = () => Promise<void>;

/** Beyond the wait for requests in flight (SHUTDOWN_TIMEOUT_MS), for closing threads, clients and stores: the spool's hand-over to Kafka included. */
export const SHUTDOWN_CLEANUP_MS = 20_000;

/**
 * Runs the stops in order, each after the one before, and reports whether
 * they all finished within `deadlineMs`. A stop that fails is logged and the
 * next one runs (what it holds dies with the process); a stop still waiting
 * at the deadline (a client blocked on a dead broker or store) is left
 * behind, so that SIGTERM always ends the process.
 */
export async function stopAll(stops: Stop[], deadlineMs: number, logger: Logger): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), deadlineMs)));
  const run = (async () => {
    for (const [index, stop] of stops.entries()) {
      try {
        await stop();
      } catch (error) {
        logger.warn({ err: (error as Error).message, stop: index }, "a component failed to stop cleanly; stopping the others");
      }
    }
  })();
  const outcome = await Promise.race([run.then(() => "done" as const), deadline]);
  clearTimeout(timer);
  if (outcome === "late") logger.error({ deadlineMs }, "shutdown did not finish in time; exiting anyway");
  return outcome === "done";
}
