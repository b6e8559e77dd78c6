import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { bodyStillComing } from "./unread-body.js";

export interface ConnectionLimits {
  /** Longest the request line and headers may take to arrive; also how long a connection may stay open without sending a request. */
  headersTimeoutMs: number;
  /** Longest a whole request (headers and body) may take to arrive. */
  requestTimeoutMs: number;
  /** How long a connection is kept open between two requests. */
  keepAliveTimeoutMs: number;
  /** Slowest body accepted once it has started, in bytes per second averaged over {@link RATE_WINDOW_MS}. */
  minBodyBytesPerSecond: number;
  /** Open connections in all; past it, a new one takes the place of the oldest that has no request being served, or is closed when every one has. */
  maxConnections: number;
  /** Open connections from one client address; more are closed as they arrive. */
  maxConnectionsPerClient: number;
}

/** Bodies are judged on what arrived over this long, so one slow moment of a good client is not a verdict. */
const RATE_WINDOW_MS = 10_000;

/** A body still arriving, and how much of its connection had been read at the last check. */
interface BodyWatch {
  request: IncomingMessage;
  requestId: string;
  socket: Socket;
  bytesAtCheck: number;
  checkedAt: number;
}

/**
 * Bounds what a connection may hold of the gateway: Node's own timeouts for
 * headers, whole requests and keep-alive, plus what Node leaves open — a
 * connection that never sends a request, a body that trickles, and how many
 * connections one address or everyone may keep. A slow body is answered by
 * `onSlowBody` (a 408) and its connection closed.
 */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits, onSlowBody: (request: IncomingMessage, response: ServerResponse, requestId: string) => void) {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node checks the two timeouts above this often; its default (30 s) would let a slow header run 30 s past its limit.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(1000, limits.headersTimeoutMs);

  // A socket idle this long with no request of its own in flight is closed; one whose request is being served is left to the request's own deadlines.
  server.timeout = limits.headersTimeoutMs;
  const serving = new WeakMap<Socket, number>();
  server.on("timeout", (socket: Socket) => {
    if (!serving.get(socket)) socket.destroy();
  });

  const perClient = new Map<string, number>();
  // Oldest first (a Set keeps insertion order). At the cap, a new connection takes the place of the oldest one with no request
  // being served (silent, sending its headers, or idle between requests): connections that only sit there, from however many
  // addresses, cannot lock everyone else out; a client whose request is served keeps its connection.
  const open = new Set<Socket>();
  const oldestIdle = () => {
    for (const socket of open) if (!serving.get(socket)) return socket;
    return undefined;
  };
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    const fromClient = (perClient.get(address) ?? 0) + 1;
    if (fromClient > limits.maxConnectionsPerClient) return void socket.destroy();
    if (open.size >= limits.maxConnections) {
      const evicted = oldestIdle();
      if (!evicted) return void socket.destroy();
      open.delete(evicted);
      evicted.destroy();
    }
    perClient.set(address, fromClient);
    open.add(socket);
    socket.once("close", () => {
      open.delete(socket);
      const left = perClient.get(address)! - 1;
      if (left === 0) perClient.delete(address);
      else perClient.set(address, left);
    });
  });

  const bodies = new Map<ServerResponse, BodyWatch>();
  const checker = setInterval(() => {
    const now = Date.now();
    for (const [response, watch] of bodies) {
      if (now - watch.checkedAt < RATE_WINDOW_MS) continue;
      const received = watch.socket.bytesRead - watch.bytesAtCheck;
      if (received < (limits.minBodyBytesPerSecond * (now - watch.checkedAt)) / 1000) {
        bodies.delete(response);
        onSlowBody(watch.request, response, watch.requestId);
        continue;
      }
      watch.bytesAtCheck = watch.socket.bytesRead;
      watch.checkedAt = now;
    }
  }, 1000);
  checker.unref();
  server.on("close", () => clearInterval(checker));

  return {
    /**
     * Call when a request starts being served: its connection is busy, and its
     * body, if still coming, is timed. Returns what to call when its response
     * closes.
     */
    serving(request: IncomingMessage, response: ServerResponse, requestId: string): () => void {
      const socket = request.socket;
      serving.set(socket, (serving.get(socket) ?? 0) + 1);
      if (bodyStillComing(request)) {
        bodies.set(response, { request, requestId, socket, bytesAtCheck: socket.bytesRead, checkedAt: Date.now() });
        request.once("end", () => bodies.delete(response));
      }
      return () => {
        bodies.delete(response);
        serving.set(socket, serving.get(socket)! - 1);
      };
    },
  };
}
