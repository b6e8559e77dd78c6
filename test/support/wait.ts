import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Named in the timeout error: "timed out after 5000 ms waiting for <what>". */
  what: string;
}

/**
 * Polls `check` until it returns true. A check that throws counts as "not yet"
 * (e.g. connection refused while a server starts); the last error is reported
 * on timeout.
 */
export async function waitFor(
  check: () => Promise<boolean>,
  { timeoutMs = 10_000, intervalMs = 50, what }: WaitOptions,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let lastError: unknown;
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const detail = lastError === undefined ? "" : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`, { cause: lastError });
    }
    await sleep(intervalMs);
  }
}

/** Resolves true if a TCP connection to host:port succeeds. */
export function canConnect(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.setTimeout(1_000);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
}

export function waitForTcp(port: number, host = "127.0.0.1", timeoutMs = 10_000): Promise<void> {
  return waitFor(() => canConnect(port, host), { timeoutMs, what: `TCP ${host}:${port}` });
}
