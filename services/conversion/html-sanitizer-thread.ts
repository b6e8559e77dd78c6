// The worker side of SanitizerThread: sanitizes the HTML pages (or Markdown, rendered first) it is sent, one at a time.
import { parentPort } from "node:worker_threads";
import { sanitizeHtmlDocument } from "./html-sanitizer.js";
import { markdownToHtml } from "./markdown-source.js";

export interface SanitizeRequest {
  id: number;
  source: Uint8Array;
  format: "html" | "markdown";
}

export type SanitizeAnswer = { id: number; html: Uint8Array } | { id: number; error: string };

const port = parentPort!;
port.on("message", ({ id, source, format }: SanitizeRequest) => {
  try {
    const bytes = Buffer.from(source.buffer, source.byteOffset, source.byteLength);
    const clean = sanitizeHtmlDocument(format === "markdown" ? markdownToHtml(bytes) : bytes);
    port.postMessage({ id, html: clean } satisfies SanitizeAnswer);
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) } satisfies SanitizeAnswer);
  }
});
