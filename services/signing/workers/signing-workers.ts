import type { Worker } from "node:worker_threads";
import { startTypeScriptWorker } from "../../core/typescript-worker.js";
import { watchCertificateExpiry } from "../../core/certificate-expiry.js";
import { isTracing, tracedServiceName, traceHeaders } from "../../core/tracing.js";
import { ServiceError } from "../../core/errors.js";
import type { RevocationSourceOptions } from "../ltv/revocation.js";
import type { Logger } from "../../core/logger.js";
import type { PdfVerification } from "../pdf/pdf-verifier.js";
import type { SigningJob } from "./signing-job.js";
import type { SigningKey } from "../keys/signing-key.js";
import { deserializeError } from "../../core/thread-errors.js";
import { Pkcs11KeyError } from "../keys/pkcs11/errors.js";
import { countKeyError, type SigningLoad } from "../signing-metrics.js";
import { asBuffer, transferList, type FromWorker, type Task, type ToWorker, type WorkerSetup } from "./worker-protocol.js";

export interface SigningWorkersOptions {
  /** Worker threads; one per core uses every core. */
  size: number;
  /** Tasks in flight across all workers; more are refused with 503. */
  queueLimit: number;
  trustedRootsDer: Buffer[];
  timestampAuthority?: { url: string; timeoutMs: number };
  revocation: RevocationSourceOptions;
}

interface PendingTask {
  worker: PooledWorker;
  resolve(message: Extract<FromWorker, { type: "done" }>): void;
  reject(error: Error): void;
}

interface PooledWorker {
  thread: Worker;
  inFlight: number;
  startedAt: number;
  /** Token sessions its key holds open, by handle (hex): closed here when the thread ends. */
  sessions: Map<string, Buffer>;
}

/** A worker that dies sooner than this after starting is restarted after {@link RESTART_DELAY_MS}, not at once. */
const EARLY_DEATH_MS = 5000;
const RESTART_DELAY_MS = 1000;

/**
 * Worker threads that sign and verify PDFs, so PDF parsing, page layout and
 * serialisation use every core and never stall the event loop. Each opens the
 * key in its own thread (the local key, or its own session on the token) and
 * signs there. A task goes to the least busy worker; a worker that dies fails
 * its tasks with INTERNAL, the token sessions it left open are closed, and it
 * is replaced (after a pause when it died young, so a worker that cannot
 * start does not spin).
 */
export class SigningWorkers {
  private readonly workers: PooledWorker[] = [];
  private readonly pending = new Map<number, PendingTask>();
  private nextTaskId = 1;
  private closing = false;

  constructor(
    private readonly key: SigningKey,
    private readonly options: SigningWorkersOptions,
    private readonly logger: Logger,
  ) {
    for (let i = 0; i < options.size; i++) this.workers.push(this.spawn());
  }

  /** `job.pdf` moves to the worker thread when it alone fills its ArrayBuffer (see {@link transferList}): the caller must be done with it. */
  async sign(job: SigningJob): Promise<Buffer> {
    const done = await this.run({ kind: "sign", job });
    return asBuffer(done.signed!);
  }

  /** `pdf` moves to the worker thread like a job's (see {@link sign}). */
  async extend(pdf: Buffer): Promise<Buffer> {
    const done = await this.run({ kind: "extend", pdf });
    return asBuffer(done.signed!);
  }

  /** `pdf` moves to the worker thread like a job's (see {@link sign}). */
  async verify(pdf: Buffer): Promise<PdfVerification> {
    const done = await this.run({ kind: "verify", pdf });
    return done.verification!;
  }

  load(): SigningLoad {
    return { workers: this.workers.length, busy: this.workers.filter((w) => w.inFlight > 0).length, tasks: this.pending.size, taskLimit: this.options.queueLimit };
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.workers.map(async (worker) => {
        await worker.thread.terminate();
        this.closeSessionsOf(worker);
      }),
    );
  }

  private run(task: Task): Promise<Extract<FromWorker, { type: "done" }>> {
    if (this.pending.size >= this.options.queueLimit) {
      return Promise.reject(new ServiceError("UNAVAILABLE", "Every signer is busy; try again shortly.", { retryAfterSeconds: 1 }));
    }
    if (this.workers.length === 0) {
      return Promise.reject(new ServiceError("UNAVAILABLE", "The signers are restarting; try again shortly.", { retryAfterSeconds: 2 }));
    }
    const worker = this.workers.reduce((least, candidate) => (candidate.inFlight < least.inFlight ? candidate : least));
    const taskId = this.nextTaskId++;
    worker.inFlight++;
    return new Promise((resolve, reject) => {
      this.pending.set(taskId, { worker, resolve, reject });
      const trace = isTracing() ? traceHeaders() : undefined;
      worker.thread.postMessage({ type: "task", taskId, task, trace } satisfies ToWorker, transferList(task.kind === "sign" ? task.job.pdf : task.pdf));
    });
  }

  private spawn(): PooledWorker {
    const setup: WorkerSetup = {
      key: this.key.keyForWorkers(),
      trustedRootsDer: this.options.trustedRootsDer,
      timestampAuthority: this.options.timestampAuthority,
      revocation: this.options.revocation,
      tracedAs: tracedServiceName(),
    };
    const worker: PooledWorker = { thread: startTypeScriptWorker("./signing-worker.js", import.meta.url, setup), inFlight: 0, startedAt: Date.now(), sessions: new Map() };
    worker.thread.on("message", (message: FromWorker) => this.onMessage(worker, message));
    worker.thread.on("error", (error) => this.replace(worker, error));
    worker.thread.on("exit", (code) => this.replace(worker, new Error(`signing worker exited with code ${code}`)));
    worker.thread.unref();
    return worker;
  }

  private onMessage(worker: PooledWorker, message: FromWorker): void {
    if (message.type === "timestampAuthorityCertificate") {
      const certificate = asBuffer(message.der);
      return watchCertificateExpiry("timestamp-authority", () => certificate);
    }
    if (message.type === "session") {
      const handle = asBuffer(message.handle);
      if (message.open) worker.sessions.set(handle.toString("hex"), handle);
      else worker.sessions.delete(handle.toString("hex"));
      return;
    }
    const task = this.pending.get(message.taskId);
    if (!task) return;
    this.pending.delete(message.taskId);
    worker.inFlight--;
    if (message.type === "done") return task.resolve(message);
    task.reject(this.failure(deserializeError(message.error)));
  }

  /** The HSM's own words and an internal error's go to the log; the caller learns the key is unavailable, or of an internal error. */
  private failure(error: Error): Error {
    if (error instanceof ServiceError) return error;
    if (error.name === Pkcs11KeyError.name) {
      countKeyError();
      this.logger.error({ err: error.message }, "the signing key failed");
      return new ServiceError("UNAVAILABLE", "The signing key (HSM) is unavailable; try again shortly.", { retryAfterSeconds: 5 });
    }
    this.logger.error({ err: error }, "signing task failed");
    return error;
  }

  /** Sessions belong to the process: those a thread's key left open stay open after the thread, unless closed here. */
  private closeSessionsOf(worker: PooledWorker): void {
    if (worker.sessions.size === 0) return;
    this.key.closeSessionsLeftBy?.(worker.sessions.values());
    worker.sessions.clear();
  }

  private replace(worker: PooledWorker, reason: Error): void {
    const index = this.workers.indexOf(worker);
    if (index === -1 || this.closing) return;
    this.logger.error({ err: reason }, "signing worker died; starting a new one");
    for (const [taskId, task] of this.pending) {
      if (task.worker !== worker) continue;
      this.pending.delete(taskId);
      task.reject(new ServiceError("INTERNAL", "The signing worker failed; try again.", { cause: reason }));
    }
    void worker.thread.terminate().then(() => this.closeSessionsOf(worker));
    this.workers.splice(index, 1);
    const delay = Date.now() - worker.startedAt < EARLY_DEATH_MS ? RESTART_DELAY_MS : 0;
    setTimeout(() => {
      if (!this.closing) this.workers.push(this.spawn());
    }, delay).unref();
  }
}
