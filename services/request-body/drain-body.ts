import type { IncomingMessage } from "node:http";

/** Longest a refused body is read and discarded before the answer goes out anyway (nginx's lingering_time). */
const DRAIN_LIMIT_MS = 30_000;

/**
 * Reads and discards the rest of a refused request body, then calls `done`
 * (which answers and closes the connection): a client still uploading gets
 * the error, where closing under it would leave it a broken pipe and no answer.
 * A body that keeps coming for DRAIN_LIMIT_MS is answered all the same.
 */
export function drainThen(request: IncomingMessage, done: () => void): void {
  let answered = false;
  const answer = () => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    done();
  };
  const timer = setTimeout(answer, DRAIN_LIMIT_MS);
  if (request.readableEnded || request.destroyed) return answer();
  request.once("end", answer);
  request.once("close", answer);
  request.resume();
}
