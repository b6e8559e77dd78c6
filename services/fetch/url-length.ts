/**
 * The longest URL a request may name (document.url), in characters, checked
 * before anything else is done with it: on /v1 by the JSON schema of
 * request-body/document-body.ts, and for every caller (Connect, gRPC and /v1
 * alike) by guardedFetch, before the URL is even parsed.
 *
 * Why 8,192: RFC 9110 (section 4.1) asks senders and recipients to support URIs
 * of at least 8,000 octets, and the servers a document is fetched from take
 * about that much in a request line (Apache's LimitRequestLine is 8,190 bytes,
 * nginx's header buffers 8 KB, IIS's maxUrl 4,096): a longer URL could not be
 * fetched from them anyway. 2,048 (old Internet Explorer's 2,083, the sitemap
 * protocol's 2,048) would refuse presigned object-store URLs, whose session
 * token and signature run them to 1,500–3,000 characters. What browsers take
 * (Chrome 2 MB) is no guide: this URL is fetched by the server, not typed.
 */
export const MAX_URL_CHARS = 8192;

/** The issue of a URL over {@link MAX_URL_CHARS}, the same wherever it is found. */
export const URL_TOO_LONG = `must be at most ${MAX_URL_CHARS} characters`;

/** The most of a client's value an error message repeats. */
const SHOWN_CHARS = 64;

/** `value` as an error message may repeat it: whole when short, else its first {@link SHOWN_CHARS} characters and "…". */
export function shown(value: string): string {
  return value.length <= SHOWN_CHARS ? value : `${value.slice(0, SHOWN_CHARS)}…`;
}
