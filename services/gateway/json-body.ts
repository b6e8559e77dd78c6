import type { IncomingMessage } from "node:http";
import { ServiceError } from "../core/errors.js";
import { drainThen } from "./drain-body.js";

const tooLarge = (maxBytes: number) => new ServiceError("PAYLOAD_TOO_LARGE", `The request body is larger than ${maxBytes} bytes.`);

/**
 * Reads a JSON request body of at most `maxBytes`. A declared Content-Length
 * over the limit is refused before any byte is read; a streamed body as soon
 * as it passes the limit (the rest is drained, then the 413 is sent).
 */
export function readJsonBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  const contentType = request.headers["content-type"] ?? "";
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(contentType)) {
    return Promise.reject(
      new ServiceError("UNSUPPORTED_MEDIA_TYPE", "Send the request body as JSON with Content-Type: application/json.", {
        details: [{ field: "Content-Type", issue: "must be application/json" }],
      }),
    );
  }
  if (Number(request.headers["content-length"] ?? 0) > maxBytes) return Promise.reject(tooLarge(maxBytes));

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= maxBytes) return void chunks.push(chunk);
      request.off("data", onData);
      request.off("end", onEnd);
      drainThen(request, () => reject(tooLarge(maxBytes)));
    };
    const onEnd = () => {
      try {
        resolve(JSON.parse((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received)).toString("utf8")));
      } catch (error) {
        reject(
          new ServiceError("VALIDATION_ERROR", `The request body is not valid JSON: ${(error as Error).message}`, {
            details: [{ field: "body", issue: "is not valid JSON" }],
          }),
        );
      }
    };
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("close", () => {
      if (!request.complete) reject(new ServiceError("VALIDATION_ERROR", "The request body was cut off.", { details: [{ field: "body", issue: "was cut off" }] }));
    });
  });
}
