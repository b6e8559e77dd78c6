import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * The most of a body read, and thrown away, after its request was answered
 * without it: refused before it was read (a 401, the memory budget's 503, a
 * framing error), over its limit (413), or too slow (408). Past it the
 * connection is no longer read.
 *
 * Why read any of it: a connection closed with bytes still unread is reset,
 * and a client still uploading may lose the answer to that reset before it has
 * read it (Windows drops what it had received and not yet handed over; a
 * client whose write fails first may never look). Reading a little lets the
 * client that stops once it sees the answer (curl, browsers, undici) finish
 * cleanly.
 *
 * Why 1 MiB: what such a client still has on its way when the answer reaches
 * it: its socket's send buffer and what its link holds over one round trip
 * (100 Mbit/s over 80 ms is 1 MB). It costs about a millisecond of CPU (the
 * audit that found the unbounded drain measured 38 GB for 46 s of CPU): less
 * than a body within its limit costs a document route, which parses it (39 MB
 * on /v1/sign).
 */
export const UNREAD_BODY_MAX_BYTES = 1024 * 1024;

/**
 * How long after the answer the connection is held at most, read or not, before
 * it is closed. The answer is sent first and reaches the client in one round
 * trip (under a second even over satellite); 2 s gives its application time to
 * read it too, where nginx lingers up to 30 s (lingering_time) and Go's
 * net/http 0.5 s (rstAvoidanceDelay). Reading stops at
 * {@link UNREAD_BODY_MAX_BYTES} well before that for a fast client: TCP then
 * holds it, at no cost in CPU, until the close.
 */
export const UNREAD_BODY_MAX_MS = 2_000;

/** Whether a request announced a body (a Content-Length other than 0, or chunked). */
export function announcesBody(request: IncomingMessage): boolean {
  const length = request.headers["content-length"];
  return length !== undefined ? length !== "0" : request.headers["transfer-encoding"] !== undefined;
}

/** Whether a request's body is still arriving: announced, and not yet all read off the connection. */
export function bodyStillComing(request: IncomingMessage): boolean {
  return announcesBody(request) && !request.complete;
}

/**
 * Makes an answer given before the request's body has all arrived end the
 * connection within the bounds above, however it is answered (a /v1 route, a
 * refusal, Connect, a connection limit), and makes it say
 * `Connection: close`. Call as the request starts being served, for a
 * request that announces a body.
 *
 * Without this, Node reads such a body to its end to keep the connection for
 * another request, for as long as it keeps coming (the whole-request timeout,
 * 300 s): gigabytes a second from one client.
 */
export function endWithAnswer(request: IncomingMessage, response: ServerResponse): void {
  // An answer written before the body has all arrived says so, whoever writes it (Connect writes its own headers): a
  // client told nothing would send its next request on a connection that is about to end.
  const writeHead = response.writeHead;
  response.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
    if (!request.complete && !this.headersSent) this.setHeader("Connection", "close");
    return writeHead.apply(this, args);
  } as ServerResponse["writeHead"];
  // "prefinish": the answer is written; Node then ("finish") either reads the rest of the body for keep-alive or closes
  response.once("prefinish", () => {
    if (!request.complete) discardThenClose(request, response);
  });
}

function discardThenClose(request: IncomingMessage, response: ServerResponse): void {
  // the response's: a request destroyed by its reader (Connect aborts one past its limit) may have let go of its own
  const socket = response.socket;
  if (!socket || socket.destroyed) return;
  const close = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(close, UNREAD_BODY_MAX_MS);
  socket.once("close", () => clearTimeout(timer));
  // Node ends a "Connection: close" answer with destroySoon(), which destroys the socket as soon as the answer is
  // flushed: with bytes unread, a reset. This one only half-closes (the client reads the answer, then the end); the
  // timer above, or the body's end, closes it.
  socket.destroySoon = halfClose;
  // a kept-alive answer (Connect's) is not closed by Node at all
  response.once("finish", () => halfClose.call(socket));
  // a request destroyed is read no more: what comes waits in TCP until the close
  if (request.destroyed) return;
  let discarded = 0;
  request.on("data", (chunk: Buffer) => {
    discarded += chunk.length;
    // Paused, the request stops reading its socket once Node's small buffer is full; the client's TCP waits.
    if (discarded > UNREAD_BODY_MAX_BYTES) request.pause();
  });
  // all of it arrived: nothing is left unread, and the close is clean (after the answer, when it is still being flushed)
  request.once("end", () => (socket.writableFinished ? close() : socket.once("finish", close)));
  request.resume();
}

function halfClose(this: Socket): void {
  if (this.writable) this.end();
}
