import type { Worker } from "node:worker_threads";
import { startTypeScriptWorker } from "../core/typescript-worker.js";
import type { SanitizeAnswer, SanitizedFormat, SanitizeRequest } from "./sanitizer-worker.js";

/**
 * The rewriting of sources before conversion (sanitizeHtmlDocument of an HTML
 * page or of Markdown rendered by markdownToHtml, stripOdtLinks,
 * neutralizeRtfFields) on a worker thread of its own, started on first use:
 * HTML takes about 200 ms per MB, and an ODT is unzipped whole and zipped
 * again, which on the calling thread would hold up every other request of
 * the process (in embedded mode, the gateway's too). Sources are rewritten
 * one after the other. A thread that dies fails the sources it held, and the
 * next source starts a new one; an idle thread does not keep the process
 * alive.
 */
export class SanitizerThread {
  private thread: Worker | undefined;
  private readonly waiting = new Map<number, { resolve(clean: Buffer): void; reject(error: Error): void }>();
  private nextId = 1;

  sanitize(source: Buffer, format: SanitizedFormat): Promise<Buffer> {
    const thread = this.running();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      thread.ref();
      thread.postMessage({ id, source, format } satisfies SanitizeRequest);
    });
  }

  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    await thread?.terminate();
  }

  private running(): Worker {
    if (this.thread) return this.thread;
    const thread = startTypeScriptWorker("./sanitizer-worker.js", import.meta.url, undefined);
    thread.on("message", (answer: SanitizeAnswer) => {
      const waiter = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) thread.unref();
      if ("error" in answer) waiter?.reject(new Error(`rewriting the source failed: ${answer.error}`));
      else waiter?.resolve(Buffer.from(answer.clean.buffer, answer.clean.byteOffset, answer.clean.byteLength));
    });
    thread.on("error", () => {}); // its exit fails what it held
    thread.on("exit", () => {
      if (this.thread === thread) this.thread = undefined;
      for (const waiter of this.waiting.values()) waiter.reject(new Error("the source sanitizer thread exited"));
      this.waiting.clear();
    });
    this.thread = thread;
    return thread;
  }
}
