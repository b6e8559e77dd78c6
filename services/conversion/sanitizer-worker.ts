// The worker side of SanitizerThread: makes the sources it is sent safe to convert, one at a time.
import { parentPort } from "node:worker_threads";
import { ServiceError } from "../core/errors.js";
import { serializeError, type SerializedError } from "../core/thread-errors.js";
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
  source: Uint8Array;
  format: SanitizedFormat;
}

/** `started` first (the thread's time limit runs from then), then the source rewritten or the error. */
export type SanitizeAnswer = { started: true } | { clean: Uint8Array } | { error: SerializedError };

/** A parser's recursion that the nesting limits did not foresee is the document's doing, like the nesting they refuse. */
function documentError(error: unknown): unknown {
  if (!(error instanceof RangeError && /call stack/i.test(error.message))) return error;
  return new ServiceError("UNPROCESSABLE_DOCUMENT", "The document nests too deeply to be read.");
}

const port = parentPort!;
port.on("message", ({ source, format }: SanitizeRequest) => {
  port.postMessage({ started: true } satisfies SanitizeAnswer);
  try {
    const clean = SANITIZE[format](Buffer.from(source.buffer, source.byteOffset, source.byteLength));
    port.postMessage({ clean } satisfies SanitizeAnswer);
  } catch (error) {
    port.postMessage({ error: serializeError(documentError(error)) } satisfies SanitizeAnswer);
  }
});
