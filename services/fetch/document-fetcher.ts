import { ServiceError, validationError } from "../core/errors.js";
import { guardedFetch, type GuardedFetchOptions } from "./guarded-fetch.js";

/** A request's document: its bytes, or the URL to read them from (the protos' DocumentSource has this shape). */
export interface DocumentSource {
  content?: Buffer;
  url?: string;
}

export type FetchDocumentOptions = Pick<GuardedFetchOptions, "maxBytes" | "timeoutMs" | "maxRedirects" | "allowHosts">;

/**
 * Downloads the document named by `document.url` with the SSRF rules of
 * {@link guardedFetch}: a malformed URL is 400 on `document.url`, anything
 * that goes wrong after it 422 with the reason.
 */
export function fetchDocument(url: string, options: FetchDocumentOptions): Promise<Buffer> {
  return guardedFetch(url, { ...options, subject: "document URL", content: "document", field: "document.url", failureCode: "UNPROCESSABLE_DOCUMENT" });
}

/** A request's document: its bytes as sent, or read from its URL; at most `options.maxBytes` either way. */
export async function documentBytes(source: DocumentSource | undefined, options: FetchDocumentOptions): Promise<Buffer> {
  if (source?.url !== undefined) return fetchDocument(source.url, options);
  const content = source?.content;
  if (!content || content.length === 0) throw validationError([{ field: "document", issue: "must have exactly one of base64 or url" }]);
  if (content.length > options.maxBytes) throw new ServiceError("PAYLOAD_TOO_LARGE", `The document is larger than ${options.maxBytes} bytes.`);
  return Buffer.from(content.buffer, content.byteOffset, content.byteLength);
}
