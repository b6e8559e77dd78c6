import { request } from "node:http";

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * Streams `total` bytes of `filler` after `head` with chunked transfer
 * encoding, as a client with no Content-Length would, and stops writing as soon
 * as the server answers. Resolves with that answer, or rejects when the
 * connection dies without one.
 */
export function chunkedUpload(url: string, headers: Record<string, string>, head: Buffer, total: number): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { ...headers, "Transfer-Encoding": "chunked" } });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    const filler = Buffer.alloc(64 * 1024, "A");
    let sent = 0;
    const pump = () => {
      if (sent === 0) req.write(head);
      while (!answered && sent < total) {
        sent += filler.length;
        if (!req.write(filler)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** Sends `part` of a body whose Content-Length promises `declared` bytes, then drops the connection. */
export function abortedUpload(url: string, headers: Record<string, string>, part: Buffer, declared: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(url, { method: "POST", headers: { ...headers, "Content-Length": String(declared) } });
    req.on("error", () => resolve());
    req.write(part, () => setTimeout(() => req.destroy(), 100));
    req.on("close", () => resolve());
  });
}

/** Sends the whole of `body` with its exact Content-Length, even when it is not a well-formed message. */
export function exactUpload(url: string, headers: Record<string, string>, body: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { ...headers, "Content-Length": String(body.length) } });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}
