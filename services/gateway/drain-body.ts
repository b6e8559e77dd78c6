import type { IncomingMessage } from "node:http";

/**
 * Reads and discards the rest of a request body, then calls `done` (which
 * answers): a client still uploading gets the error instead of a broken pipe.
 * A body that keeps going for more than another `maxBytes` is answered at that
 * point, and discarded until the answer has closed the connection.
 */
export function drainThen(request: IncomingMessage, maxBytes: number, done: () => void): void {
  let drained = 0;
  let answered = false;
  const answer = () => {
    if (answered) return;
    answered = true;
    done();
  };
  if (request.readableEnded || request.destroyed) return answer();
  request.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxBytes) answer();
  });
  request.once("end", answer);
  request.once("close", answer);
  request.resume();
}
