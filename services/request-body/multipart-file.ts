import type { IncomingMessage } from "node:http";
import busboy from "busboy";
import { ServiceError } from "../core/errors.js";

export interface UploadedFile {
  filename: string;
  bytes: Buffer;
}

const badRequest = (field: string, issue: string, message: string) => new ServiceError("VALIDATION_ERROR", message, { details: [{ field, issue }] });
const malformed = (error: Error) => badRequest("body", "is not valid multipart/form-data", `The multipart body is malformed: ${error.message}.`);
const tooLarge = (maxBytes: number) => new ServiceError("PAYLOAD_TOO_LARGE", `The file is larger than ${maxBytes} bytes.`);

/**
 * Reads the one file part named `field` of a multipart/form-data request.
 * A declared Content-Length over `maxBodyBytes` (the file's limit and room for
 * the framing) is refused before any byte is read, and a streamed body as soon
 * as the file passes `maxBytes`: answered at once, the rest of the body left to
 * the gateway, which reads a bounded part of it and closes the connection
 * (gateway/unread-body.ts).
 */
export function readMultipartFile(request: IncomingMessage, field: string, maxBytes: number, maxBodyBytes: number): Promise<UploadedFile> {
  const contentType = request.headers["content-type"] ?? "";
  if (!/^multipart\/form-data/i.test(contentType)) {
    return Promise.reject(badRequest("Content-Type", "must be multipart/form-data", `Send the document as multipart/form-data with a file part named "${field}".`));
  }
  if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) return Promise.reject(tooLarge(maxBytes));

  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // defParamCharset: browsers and curl send file names as raw UTF-8, not latin1 (busboy's default)
      parser = busboy({ headers: request.headers, defParamCharset: "utf8", limits: { files: 1, fileSize: maxBytes, fields: 20, parts: 21 } });
    } catch {
      return reject(badRequest("Content-Type", "has no multipart boundary", "The multipart/form-data Content-Type has no boundary."));
    }
    let file: UploadedFile | undefined;
    let settled = false;
    const finish = (error: ServiceError | undefined) => {
      if (settled) return;
      settled = true;
      if (error) {
        request.unpipe(parser);
        return reject(error);
      }
      if (!file) return reject(badRequest(field, "is missing", `The request has no file part named "${field}".`));
      resolve(file);
    };
    parser.on("file", (name, stream, info) => {
      // busboy reports a form that ends early on the file stream, even one being discarded; unheard, that error would end the process
      stream.on("error", (error: Error) => finish(malformed(error)));
      if (name !== field) {
        stream.resume();
        return finish(badRequest(name, "is not expected", `Unexpected file part "${name}": send one file part named "${field}".`));
      }
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("limit", () => finish(tooLarge(maxBytes)));
      stream.on("end", () => {
        file = { filename: info.filename ?? "", bytes: Buffer.concat(chunks) };
      });
    });
    parser.on("filesLimit", () => finish(badRequest(field, "appears more than once", `Send exactly one file part named "${field}".`)));
    parser.on("error", (error: Error) => finish(malformed(error)));
    parser.on("close", () => finish(undefined));
    request.on("close", () => {
      if (!request.complete) finish(badRequest("body", "was cut off", "The upload was interrupted."));
    });
    request.pipe(parser);
  });
}
