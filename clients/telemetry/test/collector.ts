/**
 * A real node:http server standing in for /v1/collect, recording what it
 * receives. By default it judges each body as the platform does, with the
 * platform's own edge (usageReportFromJson): 202 for what the platform
 * accepts, its 400 for what it refuses, so a client test cannot pass on a body
 * the platform would refuse.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ServiceError } from "../../../services/core/errors.js";
import { usageReportFromJson } from "../../../services/telemetry/intake/collect-request-schema.js";

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The status it was answered with. */
  status?: number;
}

export interface Collector {
  readonly endpoint: string;
  readonly requests: ReceivedRequest[];
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export type Respond = (request: IncomingMessage, response: ServerResponse, body: string) => void;

/** The platform's answer to a body (its license key aside: every key is taken as registered). */
export const judgeAsPlatform: Respond = (_request, response, body) => {
  try {
    const report = usageReportFromJson(JSON.parse(body), "community-and-eval-agplv3");
    const answer = report.metadataDropped.length > 0 ? { accepted: report.events.length, metadataDropped: report.metadataDropped } : { accepted: report.events.length };
    response.writeHead(202, { "Content-Type": "application/json" }).end(JSON.stringify(answer));
  } catch (error) {
    const refusal = error instanceof ServiceError ? { status: error.httpStatus, body: { code: error.code, message: error.message, details: error.details } } : { status: 400, body: { code: "VALIDATION_ERROR", message: "The body is not JSON." } };
    response.writeHead(refusal.status, { "Content-Type": "application/json" }).end(JSON.stringify(refusal.body));
  }
};

export async function startCollector(respond: Respond = judgeAsPlatform): Promise<Collector> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const received: ReceivedRequest = { method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") };
      requests.push(received);
      respond(request, response, received.body);
      if (response.headersSent) received.status = response.statusCode;
      else response.on("finish", () => (received.status = response.statusCode));
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
