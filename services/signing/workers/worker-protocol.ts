import type { SerializedError } from "../../core/thread-errors.js";
import type { PdfVerification } from "../pdf/pdf-verifier.js";
import type { RevocationSourceOptions } from "../ltv/revocation.js";
import type { WorkerKey } from "../keys/signing-key.js";
import type { SigningJob } from "./signing-job.js";

/** The messages between the signing service and its worker threads. */

/** What a worker needs to build signatures: the key to open in its own thread, and where to check and timestamp. */
export interface WorkerSetup {
  key: WorkerKey;
  /** Set when the process exports traces: the worker exports its spans under this service name too. */
  tracedAs?: string;
  trustedRootsDer: Uint8Array[];
  /** Set: every signature is timestamped by this RFC 3161 authority. */
  timestampAuthority?: { url: string; timeoutMs: number };
  /** Where B-LT and B-LTA fetch revocation data. */
  revocation: RevocationSourceOptions;
}

export type Task = { kind: "sign"; job: SigningJob } | { kind: "verify"; pdf: Uint8Array } | { kind: "extend"; pdf: Uint8Array };

/** `trace`: the caller's trace context (traceparent), so the task's spans join its trace. */
export type ToWorker = { type: "task"; taskId: number; task: Task; trace?: Record<string, string> };

export type FromWorker =
  | { type: "done"; taskId: number; signed?: Uint8Array; verification?: PdfVerification }
  | { type: "failed"; taskId: number; error: SerializedError }
  /** A token session the worker's key opened (`open`) or ended: left open when the worker ends, the parent closes it. */
  | { type: "session"; handle: Uint8Array; open: boolean }
  /** The certificate the TSA signed a token with, when it is not the one reported before. */
  | { type: "timestampAuthorityCertificate"; der: Uint8Array };

/**
 * The transfer list for posting `bytes` to another thread: their ArrayBuffer
 * when they alone fill it, so they move instead of being copied (and are
 * empty on this side afterwards); none when they share it, as a pooled Buffer
 * or a view into a larger message does.
 */
export function transferList(bytes: Uint8Array): ArrayBuffer[] {
  const { buffer } = bytes;
  // a buffer larger than the pool is nobody else's, even with room left at its end (a PdfOutput)
  const ownsBuffer = bytes.byteLength === buffer.byteLength || buffer.byteLength > Buffer.poolSize;
  return buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && ownsBuffer ? [buffer] : [];
}

/** A Buffer over the bytes of a Uint8Array that crossed a thread boundary (no copy). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
