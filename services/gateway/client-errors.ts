import { randomUUID } from "node:crypto";
import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ServiceError } from "../core/errors.js";
import { errorReply, sendReply } from "../contracts/reply.js";

/** Node's limit on the request line and headers together (--max-http-header-size, read rather than assumed). */
const MAX_HEADER_BYTES = maxHeaderSize;

export interface ClientErrorLine {
  requestId: string;
  status: number;
  parserError: string;
}

/**
 * Gives the requests Node refuses before any route sees them (malformed
 * framing, oversized headers, slow headers, a bogus Expect) the one JSON error
 * body and an X-Request-Id, where Node would answer with an empty body.
 */
export function answerClientErrors(server: Server, log: (line: ClientErrorLine) => void): void {
  server.on("clientError", (error: Error & { code?: string; rawPacket?: Buffer }, socket: Socket) => {
    const parserError = error.code ?? "";
    // a response under way (a body that broke mid-request) cannot be replaced: the route answers, or the connection just closes
    const busy = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage?.headersSent;
    if (parserError === "ECONNRESET" || !socket.writable || busy) return void socket.destroy();
    const requestId = randomUUID();
    const { status, body } = errorReply(parserVerdict(parserError, error.rawPacket), requestId);
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
        `X-Request-Id: ${requestId}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${text}`,
    );
    log({ requestId, status, parserError });
  });

  // Node answers an Expect it does not know with an empty 417; this one says why.
  server.on("checkExpectation", (request: IncomingMessage, response: ServerResponse) => {
    const requestId = randomUUID();
    const error = new ServiceError("EXPECTATION_FAILED", `Expect: ${String(request.headers.expect).slice(0, 64)} is not supported; only 100-continue is.`);
    const reply = errorReply(error, requestId);
    void sendReply(response, { ...reply, headers: { ...reply.headers, Connection: "close" } }, requestId);
  });
}

function parserVerdict(parserError: string, rawPacket: Buffer | undefined): ServiceError {
  switch (parserError) {
    case "HPE_HEADER_OVERFLOW":
      return requestLineTooLong(rawPacket)
        ? new ServiceError("URI_TOO_LONG", `The request line is longer than ${MAX_HEADER_BYTES} bytes.`)
        : new ServiceError("HEADERS_TOO_LARGE", `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes.`);
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new ServiceError("REQUEST_TIMEOUT", "The request did not arrive in time.");
    default:
      return new ServiceError("VALIDATION_ERROR", "The request is not valid HTTP/1.1.", { details: [{ field: "request", issue: `is malformed (${parserError || "unparsable"})` }] });
  }
}

/** Whether the first line alone went past the limit: then the target, not the headers, is too long. */
function requestLineTooLong(rawPacket: Buffer | undefined): boolean {
  if (!rawPacket) return false;
  const end = rawPacket.indexOf("\r\n");
  return (end < 0 ? rawPacket.length : end) >= MAX_HEADER_BYTES;
}
