import type { Worker } from "node:worker_threads";
import { ServiceError } from "../core/errors.js";
import { deserializeError } from "../core/thread-errors.js";
import { startTypeScriptWorker } from "../core/typescript-worker.js";
import type { SanitizeAnswer, SanitizedFormat, SanitizeRequest } from "./sanitizer-worker.js";

/**
 * The time HTML or Markdown may take to be rewritten: SANITIZE_BASE_MS plus
 * SANITIZE_MS_PER_MB per MB of source, about four times what a document takes
 * (bench/README.md, "Sanitizer time budget"). Past it the thread is ended and
 * the document refused: marked's emphasis runs in time quadratic in a
 * paragraph's delimiters, which no scan ahead of it bounds. ODT and RTF are
 * not timed: an ODT's work follows its unpacked XML, which a small zip can
 * inflate many times over, not the bytes sent.
 */
export const SANITIZE_BASE_MS = 1000;
export const SANITIZE_MS_PER_MB = 2000;
const TIMED: ReadonlySet<SanitizedFormat> = new Set(["html", "markdown"]);

/** The time `format` may take for `bytes` of source; undefined when it is not timed. */
export function sanitizeBudgetMs(format: SanitizedFormat, bytes: number): number | undefined {
  return TIMED.has(format) ? Math.round(SANITIZE_BASE_MS + (SANITIZE_MS_PER_MB * bytes) / 1_000_000) : undefined;
}

interface Job {
  source: Buffer;
  format: SanitizedFormat;
  resolve(clean: Buffer): void;
  reject(error: Error): void;
}

/**
 * The rewriting of sources before conversion (sanitizeHtmlDocument of an HTML
 * page or of Markdown rendered by markdownToHtml, stripOdtLinks,
 * neutralizeRtfFields) on a worker thread of its own, started on first use:
 * HTML takes a few hundred ms per MB, and an ODT is unzipped whole and zipped
 * again, which on the calling thread would hold up every other request of
 * the process (in embedded mode, the gateway's too). Sources are sent one at
 * a time, so each one's time limit ({@link sanitizeBudgetMs}) counts its own
 * work only. A thread that dies or overruns fails the source it held, and the
 * next source starts a new one; an idle thread does not keep the process
 * alive.
 */
export class SanitizerThread {
  private thread: Worker | undefined;
  private readonly queue: Job[] = [];
  private current: { job: Job; timer?: NodeJS.Timeout } | undefined;

  sanitize(source: Buffer, format: SanitizedFormat): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ source, format, resolve, reject });
      this.next();
    });
  }

  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    for (const job of this.queue.splice(0)) job.reject(new Error("the source sanitizer thread was closed"));
    this.finish()?.reject(new Error("the source sanitizer thread was closed"));
    await thread?.terminate();
  }

  private next(): void {
    if (this.current) return;
    const job = this.queue.shift();
    if (!job) return;
    const thread = this.running();
    this.current = { job };
    thread.ref();
    thread.postMessage({ source: job.source, format: job.format } satisfies SanitizeRequest);
  }

  /** From when the thread starts on the job: its start-up (loading marked, sanitize-html, …) is not the document's doing. */
  private startClock(): void {
    const current = this.current!;
    const budgetMs = sanitizeBudgetMs(current.job.format, current.job.source.length);
    if (budgetMs !== undefined) current.timer = setTimeout(() => this.overrun(budgetMs), budgetMs);
  }

  /** The job in progress, no longer in progress. */
  private finish(): Job | undefined {
    const current = this.current;
    this.current = undefined;
    clearTimeout(current?.timer);
    if (this.queue.length === 0) this.thread?.unref();
    return current?.job;
  }

  private overrun(budgetMs: number): void {
    const thread = this.thread;
    this.thread = undefined;
    void thread?.terminate();
    this.finish()?.reject(
      new ServiceError(
        "UNPROCESSABLE_DOCUMENT",
        `Reading the document took longer than ${budgetMs} ms, the limit for a document of its size (${SANITIZE_BASE_MS} ms and ${SANITIZE_MS_PER_MB} ms per MB).`,
      ),
    );
    this.next();
  }

  private running(): Worker {
    if (this.thread) return this.thread;
    const thread = startTypeScriptWorker("./sanitizer-worker.js", import.meta.url, undefined);
    thread.on("message", (answer: SanitizeAnswer) => {
      if (thread !== this.thread) return;
      if ("started" in answer) return this.startClock();
      const job = this.finish();
      if ("error" in answer) job?.reject(deserializeError(answer.error));
      else job?.resolve(Buffer.from(answer.clean.buffer, answer.clean.byteOffset, answer.clean.byteLength));
      this.next();
    });
    thread.on("error", () => {}); // its exit fails what it held
    thread.on("exit", () => {
      if (thread !== this.thread) return; // ended on purpose: what it held is settled
      this.thread = undefined;
      this.finish()?.reject(new Error("the source sanitizer thread exited"));
      this.next();
    });
    this.thread = thread;
    return thread;
  }
}
