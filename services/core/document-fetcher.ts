import { guardedFetch, type GuardedFetchOptions } from "./guarded-fetch.js";

export type FetchDocumentOptions = Pick<GuardedFetchOptions, "maxBytes" | "timeoutMs" | "maxRedirects" | "allowHosts">;

/**
 * Downloads the document named by `document.url` with the SSRF rules of
 * {@link guardedFetch}: a malformed URL is 400 on `document.url`, anything
 * that goes wrong after it 422 with the reason.
 */
export function fetchDocument(url: string, options: FetchDocumentOptions): Promise<Buffer> {
  return guardedFetch(url, { ...options, subject: "document URL", content: "document", field: "document.url", failureCode: "UNPROCESSABLE_DOCUMENT" });
}
