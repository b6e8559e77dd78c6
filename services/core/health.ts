import { withDeadline } from "./deadline.js";

/** Resolves when a dependency can serve requests; rejects with the reason when it cannot. */
export type HealthCheck = () => Promise<void>;

export interface HealthReport {
  status: "ok" | "down";
  latencyMs: number;
  error?: string;
}

/** Runs a check with a deadline, so a hung dependency reports down instead of hanging the health route. */
export async function probe(check: HealthCheck, timeoutMs: number): Promise<HealthReport> {
  const started = performance.now();
  try {
    await withDeadline(check(), timeoutMs);
    return { status: "ok", latencyMs: elapsed(started) };
  } catch (error) {
    return { status: "down", latencyMs: elapsed(started), error: error instanceof Error ? error.message : String(error) };
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
