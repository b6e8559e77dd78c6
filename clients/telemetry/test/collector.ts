/** A real node:http server standing in for /v1/collect, recording what it receives. */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface Collector {
  readonly endpoint: string;
  readonly requests: ReceivedRequest[];
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export type Respond = (request: IncomingMessage, response: ServerResponse) => void;

const accept: Respond = (_request, response) => {
  response.writeHead(202, { "Content-Type": "application/json" }).end('{"accepted":1}');
};

export async function startCollector(respond: Respond = accept): Promise<Collector> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      respond(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/v1/collect`,
    requests,
    async waitFor(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${requests.length}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL on which nothing listens. */
export async function deadEndpoint(): Promise<string> {
  const collector = await startCollector();
  const endpoint = collector.endpoint;
  await collector.close();
  return endpoint;
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
