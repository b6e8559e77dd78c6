// The worker side of SanitizerThread: makes the sources it is sent safe to convert, one at a time.
import { parentPort } from "node:worker_threads";
import { sanitizeHtmlDocument } from "./html-sanitizer.js";
import { markdownToHtml } from "./markdown-source.js";
import { stripOdtLinks } from "./odt-links.js";
import { neutralizeRtfFields } from "./rtf-fields.js";

/** Sources rewritten before conversion: HTML sanitized (Markdown rendered to HTML first), ODT and RTF without what reads outside them. */
export type SanitizedFormat = "html" | "markdown" | "odt" | "rtf";

const SANITIZE: Record<SanitizedFormat, (source: Buffer) => Buffer> = {
  html: sanitizeHtmlDocument,
  markdown: (source) => sanitizeHtmlDocument(markdownToHtml(source)),
  odt: stripOdtLinks,
  rtf: neutralizeRtfFields,
};

export interface SanitizeRequest {
  id: number;
  source: Uint8Array;
  format: SanitizedFormat;
}

export type SanitizeAnswer = { id: number; clean: Uint8Array } | { id: number; error: string };

const port = parentPort!;
port.on("message", ({ id, source, format }: SanitizeRequest) => {
  try {
    const clean = SANITIZE[format](Buffer.from(source.buffer, source.byteOffset, source.byteLength));
    port.postMessage({ id, clean } satisfies SanitizeAnswer);
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) } satisfies SanitizeAnswer);
  }
});
