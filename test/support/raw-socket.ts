import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The connection ended (closed by the server) without any answer. */
  closedSilently: boolean;
  ms: number;
}

/**
 * Writes `bytes` as they are on a fresh TCP connection (no HTTP client in the
 * way, so malformed framing reaches the server as written) and reads until the
 * server closes or `timeoutMs` passes. `localAddress` picks the source address
 * (any of 127.0.0.0/8 reaches a loopback listener).
 */
export function rawExchange(port: number, bytes: string | Buffer, options: { timeoutMs?: number; localAddress?: string } = {}): Promise<RawResponse> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: options.localAddress });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end of the answer within ${options.timeoutMs ?? 10_000} ms: ${Buffer.concat(chunks).toString("latin1").slice(0, 200)}`));
    }, options.timeoutMs ?? 10_000);
    socket.on("connect", () => socket.write(bytes));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ ...parseResponse(Buffer.concat(chunks).toString("latin1")), ms: performance.now() - started });
    });
  });
}

function parseResponse(text: string): Omit<RawResponse, "ms"> {
  if (text === "") return { status: 0, headers: {}, body: "", closedSilently: true };
  const headEnd = text.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = text.slice(0, headEnd).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body: text.slice(headEnd + 4), closedSilently: false };
}

/** Opens a TCP connection and keeps it open, sending nothing; resolves once connected (or refused). */
export function idleConnection(port: number, localAddress?: string): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress });
    socket.on("error", () => {});
    socket.once("connect", () => resolve(socket));
    socket.once("close", () => resolve(socket));
  });
}

/** Writes `head` at once, then `bytes` one byte every `intervalMs`, on a fresh connection; resolves with what came back and when the connection ended. */
export function trickle(port: number, bytes: string, intervalMs: number, maxMs: number, options: { localAddress?: string; head?: string } = {}): Promise<RawResponse & { sentBytes: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: options.localAddress });
    if (options.head) socket.once("connect", () => socket.write(options.head!));
    const chunks: Buffer[] = [];
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < bytes.length && socket.writable) socket.write(bytes[sent++]);
    }, intervalMs);
    const giveUp = setTimeout(() => socket.destroy(), maxMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ ...parseResponse(Buffer.concat(chunks).toString("latin1")), ms: performance.now() - started, sentBytes: sent });
    });
  });
}

export interface Flooded extends RawResponse {
  /** From the connection to the answer's first byte; -1 without one. */
  answerMs: number;
  /** Bytes the connection took from this client (into the kernel's buffers, for the most part, once the server stops reading). */
  sentBytes: number;
  /** Whether the connection ended in a reset rather than a close. */
  reset: boolean;
  /** Whether `giveUpMs` passed before the server closed. */
  gaveUp: boolean;
}

/**
 * Writes `head` (request line, headers and the blank line), then a body as
 * fast as the connection takes it (in 64 KB chunks when `chunked`), and goes
 * on after the answer and after the server's end, as a hostile client would,
 * until the server closes or `giveUpMs` passes. With `parts`, sends pieces of
 * those sizes 100 ms apart instead and then only reads, as a client that
 * reads its answer once its upload is done (and then ends its own side).
 */
export function flood(port: number, head: string, options: { chunked?: boolean; parts?: number[]; giveUpMs?: number } = {}): Promise<Flooded> {
  const started = performance.now();
  const giveUpMs = options.giveUpMs ?? 15_000;
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const chunk = options.chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]) : piece;
    const received: Buffer[] = [];
    let [answerMs, sentBytes, reset, gaveUp, sentAll, ended] = [-1, 0, false, false, false, false];
    const pump = () => {
      while (!socket.destroyed && socket.writable) {
        sentBytes += chunk.length;
        if (!socket.write(chunk)) return void socket.once("drain", pump);
      }
    };
    const sendParts = (parts: number[]) =>
      parts.forEach((bytes, i) =>
        setTimeout(() => {
          socket.write(Buffer.alloc(bytes, 0x20));
          sentBytes += bytes;
          sentAll = i === parts.length - 1;
          if (sentAll && ended) socket.end();
        }, 100 * i),
      );
    socket.on("connect", () => {
      socket.write(head);
      if (options.parts) sendParts(options.parts);
      else pump();
    });
    socket.on("data", (data: Buffer) => {
      if (answerMs < 0) answerMs = performance.now() - started;
      received.push(data);
    });
    socket.on("end", () => {
      ended = true;
      if (options.parts && sentAll) socket.end();
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNRESET" || error.code === "EPIPE") reset = true;
    });
    const timer = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, giveUpMs);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ ...parseResponse(Buffer.concat(received).toString("latin1")), ms: performance.now() - started, answerMs, sentBytes, reset, gaveUp });
    });
  });
}
