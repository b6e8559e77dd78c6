/**
 * A light closed-loop HTTP/1.1 load generator for benchmarks that share their
 * cores with the server under test: N keep-alive connections on raw sockets,
 * each sending pre-encoded requests one at a time (no pipelining) and reading
 * the answer by its Content-Length, at a fraction of the CPU an HTTP client
 * library spends per request.
 *
 * A connection sends its next request only after the answer to the previous
 * one, and none after the deadline; the run ends once every request sent was
 * answered, so the caller knows exactly which requests the server processed.
 */
import { connect } from "node:net";

export interface ClosedLoopOptions {
  port: number;
  connections: number;
  durationMs: number;
  /** Complete requests (head and body), sent in turn. Each must ask for a keep-alive answer with a Content-Length. */
  requests: Buffer[];
  /** Throws when an answer is not the expected one; the run then fails. */
  check(status: number, body: string, request: number): void;
}

export interface ClosedLoopResult {
  /** Answers received (every one passed `check`). */
  answered: number;
  /** Answers per request index. */
  answeredPerRequest: number[];
  /** From the first request sent to the last answer. */
  seconds: number;
  /** Latency of every request, ascending, in ms. */
  latenciesMs: Float64Array;
}

const HEAD_END = Buffer.from("\r\n\r\n");
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

export async function closedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const answeredPerRequest = options.requests.map(() => 0);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = started + options.durationMs;

  const connection = (id: number) =>
    new Promise<void>((resolve, reject) => {
      const socket = connect({ port: options.port, host: "127.0.0.1", noDelay: true });
      let buffered: Buffer | undefined;
      let sentAt = 0;
      let index = -1;
      let finished = false;
      let answered = 0;
      const fail = (error: Error) => {
        if (finished) return;
        finished = true;
        socket.destroy();
        const pending = sentAt > 0 ? `, a request pending for ${(performance.now() - sentAt).toFixed(0)} ms` : "";
        reject(new Error(`connection ${id}: ${error.message} (after ${answered} answers${pending})`, { cause: error }));
      };
      const send = () => {
        if (performance.now() >= deadline) {
          finished = true;
          socket.end();
          return resolve();
        }
        index = next++ % options.requests.length;
        sentAt = performance.now();
        socket.write(options.requests[index]);
      };
      socket.on("connect", send);
      socket.on("data", (chunk: Buffer) => {
        buffered = buffered ? Buffer.concat([buffered, chunk]) : chunk;
        const headEnd = buffered.indexOf(HEAD_END);
        if (headEnd < 0) return;
        const head = buffered.toString("latin1", 0, headEnd);
        const length = CONTENT_LENGTH.exec(head);
        if (!length) return fail(new Error(`an answer without Content-Length: ${head}`));
        const end = headEnd + HEAD_END.length + Number(length[1]);
        if (buffered.length < end) return;
        if (buffered.length > end) return fail(new Error("bytes after the answer: the server answered more than it was asked"));
        const latency = performance.now() - sentAt;
        const status = Number(head.slice(9, 12));
        const body = buffered.toString("utf8", headEnd + HEAD_END.length, end);
        buffered = undefined;
        try {
          options.check(status, body, index);
        } catch (error) {
          return fail(error as Error);
        }
        latencies.push(latency);
        answeredPerRequest[index]++;
        answered++;
        sentAt = 0;
        send();
      });
      socket.on("error", fail);
      socket.on("close", () => fail(new Error("the server closed a connection during the run")));
    });

  await Promise.all(Array.from({ length: options.connections }, (_, id) => connection(id)));
  const seconds = (performance.now() - started) / 1000;
  return { answered: latencies.length, answeredPerRequest, seconds, latenciesMs: Float64Array.from(latencies).sort() };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))];
}
