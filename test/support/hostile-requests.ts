import { connect as http2Connect, constants } from "node:http2";
import { residentMemory } from "./process-memory.js";

/** `{"a":{"a":…1…}}` nested `depth` levels, as text (never built as a value: JSON.stringify would overflow first). */
export function deepJson(depth: number): string {
  return '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

/** `[[[…]]]` nested `depth` levels, as text. */
export function deepArray(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

/** A protobuf varint. */
export function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

const field = (tag: number, payload: Buffer) => Buffer.concat([Buffer.from([tag]), varint(payload.length), payload]);

/**
 * A google.protobuf.Struct nested `depth` levels ({"a": {"a": …}}) in the
 * protobuf binary encoding, built from the inside out without recursion.
 */
export function deepStructBinary(depth: number): Buffer {
  let struct = Buffer.alloc(0);
  for (let level = 0; level < depth; level++) {
    const value = field(0x2a, struct); // Value.struct_value = 5
    const entry = Buffer.concat([field(0x0a, Buffer.from("a")), field(0x12, value)]); // key = 1, value = 2
    struct = field(0x0a, entry); // Struct.fields = 1
  }
  return struct;
}

/** A length-prefixed gRPC message: flag (1 = compressed), length, bytes. */
export function grpcEnvelope(message: Buffer, compressed = false): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(compressed ? 1 : 0, 0);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

export interface GrpcAnswer {
  /** grpc-status of the trailers (or of a trailers-only answer); -1 when the stream ended without one. */
  status: number;
  message: string;
}

/** One unary gRPC call over a bare HTTP/2 connection, its request bytes exactly as given (already enveloped). */
export function rawGrpcCall(port: number, path: string, envelope: Buffer, headers: Record<string, string> = {}): Promise<GrpcAnswer> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ [constants.HTTP2_HEADER_METHOD]: "POST", [constants.HTTP2_HEADER_PATH]: path, "content-type": "application/grpc", te: "trailers", ...headers });
    let answer: GrpcAnswer = { status: -1, message: "" };
    const take = (fields: Record<string, unknown>) => {
      if (fields["grpc-status"] !== undefined) answer = { status: Number(fields["grpc-status"]), message: decodeURIComponent(String(fields["grpc-message"] ?? "")) };
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", () => {});
    stream.on("error", () => {});
    stream.on("close", () => {
      session.close();
      resolve(answer);
    });
    stream.end(envelope);
  });
}

/** Resident memory of a process, sampled every `intervalMs` until stopped: its start, peak and last value. */
export class ResidentSampler {
  readonly start: number;
  peak: number;
  last: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    intervalMs = 50,
  ) {
    this.start = this.last = this.peak = residentMemory(pid).rss;
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  sample(): number {
    this.last = residentMemory(this.pid).rss;
    this.peak = Math.max(this.peak, this.last);
    return this.last;
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}
