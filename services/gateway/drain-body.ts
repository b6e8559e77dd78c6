import type { IncomingMessage } from "node:http";

/**
 * Reads and discards the rest of a request body before `done` answers, so a
 * client still uploading gets the error instead of a broken pipe; a body that
 * keeps going for more than another `maxBytes` is cut off.
 */
export function drainThen(request: IncomingMessage, maxBytes: number, done: () => void): void {
  let drained = 0;
  request.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxBytes) request.destroy();
  });
  request.once("end", done);
  request.once("close", done);
  request.resume();
}
