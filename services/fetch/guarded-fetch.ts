import { lookup } from "node:dns/promises";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { ServiceError, validationError } from "../core/errors.js";
import { classifyAddress, CATEGORY_TEXT } from "./address-ranges.js";
import { MAX_URL_CHARS, shown, URL_TOO_LONG } from "./url-length.js";

/**
 * Downloads what a URL from outside names (a document to sign, a certificate's
 * OCSP responder or CRL), guarding against SSRF:
 * only http/https, the host is resolved here and refused when any of its addresses is
 * loopback, private, link-local, cloud-metadata or otherwise not public (also after every
 * redirect), and the connection goes to the address that was checked (no second lookup, so
 * DNS rebinding cannot swap it). Every failure after the URL itself is valid is a
 * ServiceError of the caller's code (`failureCode`) with a reason the caller can read; a
 * malformed URL, or one longer than MAX_URL_CHARS, is VALIDATION_ERROR (400) on `field`.
 * Messages repeat at most a short start of what the URL holds (`shown`).
 */

export interface GuardedFetchOptions {
  /** What the URL is, for messages: "document URL", "OCSP responder". */
  subject: string;
  /** What it answers with, for messages: "document", "OCSP response". */
  content: string;
  /** The request field a malformed URL is reported on. */
  field: string;
  /** The code of every failure after the URL is valid. */
  failureCode: "UNPROCESSABLE_DOCUMENT" | "UNAVAILABLE";
  /** Sent as Accept. */
  accept?: string;
  /** Sent with POST (and again after a redirect); unset: GET. */
  body?: { bytes: Buffer; contentType: string };
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  /** Budget for the whole fetch: every lookup, connection, redirect and the body. */
  timeoutMs: number;
  /** How many redirects are followed; one more is refused. */
  maxRedirects: number;
  /**
   * Hosts that may be internal: "host" (any port) or "host:port" ("[::1]:8081" for IPv6).
   * A URL whose host (and port) matches skips the address check; it is still resolved once
   * and connected to the resolved address.
   */
  allowHosts: string[];
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Host names that reach a cloud provider's instance metadata, refused before any lookup. */
const METADATA_HOSTNAMES = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
]);

export async function guardedFetch(url: string, options: GuardedFetchOptions): Promise<Buffer> {
  const first = parseInitialUrl(url, options.field);
  const allow = options.allowHosts.map(parseAllowEntry);

  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = failure(options, `The ${options.subject} did not answer within ${formatDuration(options.timeoutMs)}.`);
      controller.abort(error);
      reject(error);
    }, options.timeoutMs);
  });
  const work = fetchChain(first, options, allow, controller.signal);
  // Whichever loses the race must not surface as an unhandled rejection.
  work.catch(() => {});
  deadline.catch(() => {});
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function fetchChain(
  start: URL,
  options: GuardedFetchOptions,
  allow: AllowEntry[],
  signal: AbortSignal,
): Promise<Buffer> {
  let target = start;
  for (let redirects = 0; ; redirects++) {
    const addresses = await checkTarget(target, allow, options);
    if (signal.aborted) throw signal.reason;
    const outcome = await requestOnce(target, addresses, options, signal);
    if (outcome.kind === "body") return outcome.body;
    if (redirects >= options.maxRedirects) {
      throw failure(options, `The ${options.subject} redirected more than ${options.maxRedirects} times.`);
    }
    target = parseRedirect(outcome.location, target, options);
  }
}

// ---------------------------------------------------------------------------------------------
// URLs

function parseInitialUrl(raw: string, field: string): URL {
  // before the parser, the lookup or any message sees it
  if (raw.length > MAX_URL_CHARS) throw validationError([{ field, issue: URL_TOO_LONG }]);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError([{ field, issue: "must be an absolute http or https URL" }]);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw validationError([
      { field, issue: `must use http or https, not ${shown(url.protocol.replace(/:$/, ""))}` },
    ]);
  }
  if (url.username !== "" || url.password !== "") {
    throw validationError([{ field, issue: "must not contain credentials" }]);
  }
  if (url.hostname === "") {
    throw validationError([{ field, issue: "must name a host" }]);
  }
  return url;
}

function parseRedirect(location: string, base: URL, options: GuardedFetchOptions): URL {
  let url: URL;
  try {
    url = new URL(location, base);
  } catch {
    throw failure(options, `The ${options.subject} redirected to an invalid URL.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw failure(options, 
      `The ${options.subject} redirected to a ${shown(url.protocol.replace(/:$/, ""))} URL; only http and https are allowed.`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw failure(options, `The ${options.subject} redirected to a URL with credentials, which is not allowed.`);
  }
  return url;
}

/** Host name without IPv6 brackets, lower case, without a trailing dot. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.+$/, "").toLowerCase();
}

function effectivePort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

// ---------------------------------------------------------------------------------------------
// Allow-list

interface AllowEntry {
  host: string;
  /** undefined: any port. */
  port: number | undefined;
}

function parseAllowEntry(entry: string): AllowEntry {
  const text = entry.trim();
  let host: string;
  let port: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = `[${bracketed[1]}]`;
    port = bracketed[2];
  } else if (isIP(text) === 6) {
    host = `[${text}]`;
  } else {
    const plain = /^([^:/\s]+)(?::(\d+))?$/.exec(text);
    if (!plain) throw new TypeError(`Invalid allowHosts entry: ${JSON.stringify(entry)}`);
    host = plain[1]!;
    port = plain[2];
  }
  let normalized: URL;
  try {
    // The same normalisation a request URL gets (case, IPv4 shorthand, IPv6 compression).
    normalized = new URL(`http://${host}/`);
  } catch {
    throw new TypeError(`Invalid allowHosts entry: ${JSON.stringify(entry)}`);
  }
  const portNumber = port === undefined ? undefined : Number(port);
  if (portNumber !== undefined && (portNumber < 1 || portNumber > 65535)) {
    throw new TypeError(`Invalid allowHosts entry: ${JSON.stringify(entry)}`);
  }
  return { host: bareHost(normalized), port: portNumber };
}

function isAllowed(url: URL, allow: AllowEntry[]): boolean {
  const host = bareHost(url);
  const port = effectivePort(url);
  return allow.some((entry) => entry.host === host && (entry.port === undefined || entry.port === port));
}

// ---------------------------------------------------------------------------------------------
// Resolution and address checks

interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

async function checkTarget(url: URL, allow: AllowEntry[], options: GuardedFetchOptions): Promise<ResolvedAddress[]> {
  const host = bareHost(url);
  const allowed = isAllowed(url, allow);
  if (!allowed && METADATA_HOSTNAMES.has(host)) {
    throw failure(options, `The ${options.subject} points at a cloud metadata host (${host}), which is not allowed.`);
  }
  let addresses: ResolvedAddress[];
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    addresses = found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } catch (error) {
    throw failure(options, `The ${options.subject}'s host (${shown(host)}) could not be resolved.`, error);
  }
  if (addresses.length === 0) {
    throw failure(options, `The ${options.subject}'s host (${shown(host)}) could not be resolved.`);
  }
  if (!allowed) {
    for (const { address } of addresses) {
      const category = classifyAddress(address);
      if (category !== null) {
        throw failure(options, 
          `The ${options.subject} resolves to ${CATEGORY_TEXT[category]} (${address}), which is not allowed.`,
        );
      }
    }
  }
  return addresses;
}

// ---------------------------------------------------------------------------------------------
// One HTTP exchange

type Outcome = { kind: "body"; body: Buffer } | { kind: "redirect"; location: string };

/** A lookup that answers with the addresses already checked, whatever it is asked. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
    const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    if (usable.length === 0) {
      const error: NodeJS.ErrnoException = new Error("No checked address of the requested family");
      error.code = "ENOTFOUND";
      callback(error, "", 0);
      return;
    }
    if (options.all) {
      callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
    } else {
      callback(null, usable[0]!.address, usable[0]!.family);
    }
  };
}

async function requestOnce(
  url: URL,
  addresses: ResolvedAddress[],
  options: GuardedFetchOptions,
  signal: AbortSignal,
): Promise<Outcome> {
  const { maxBytes } = options;
  const client = url.protocol === "https:" ? https : http;
  const req = client.request(url, {
    method: options.body ? "POST" : "GET",
    agent: false, // a fresh connection each time: no pooled socket to an address checked for another request
    lookup: pinnedLookup(addresses),
    signal,
    headers: {
      accept: options.accept ?? "*/*",
      "accept-encoding": "identity",
      "user-agent": "DocService",
      ...(options.body && { "content-type": options.body.contentType }),
    },
  });

  let res: IncomingMessage;
  try {
    res = await new Promise<IncomingMessage>((resolve, reject) => {
      req.once("response", resolve);
      req.once("error", reject);
      req.end(options.body?.bytes);
    });
  } catch (error) {
    throw transportError(error, signal, options);
  }
  // Later errors show up on the response stream; keep the request's from going unhandled.
  req.on("error", () => {});

  const close = () => {
    res.destroy();
    req.destroy();
  };

  const status = res.statusCode ?? 0;
  if (REDIRECT_STATUSES.has(status)) {
    close();
    const location = res.headers.location;
    if (!location) throw failure(options, `The ${options.subject} answered ${status} without a Location.`);
    return { kind: "redirect", location };
  }
  if (status < 200 || status > 299) {
    close();
    throw failure(options, `The ${options.subject} answered ${status}.`);
  }

  const declared = res.headers["content-length"];
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > maxBytes) {
    close();
    throw tooLarge(options);
  }

  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > maxBytes) {
        close();
        throw tooLarge(options);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw transportError(error, signal, options);
  }
  if (!res.complete) {
    throw failure(options, `The ${options.subject} closed the connection before sending the whole ${options.content}.`);
  }
  return { kind: "body", body: Buffer.concat(chunks, received) };
}

// ---------------------------------------------------------------------------------------------
// Errors

function failure(options: GuardedFetchOptions, message: string, cause?: unknown): ServiceError {
  return new ServiceError(options.failureCode, message, cause === undefined ? {} : { cause });
}

function tooLarge(options: GuardedFetchOptions): ServiceError {
  return failure(options, `The ${options.content} at the URL is larger than ${options.maxBytes} bytes.`);
}

function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function transportError(error: unknown, signal: AbortSignal, options: GuardedFetchOptions): ServiceError {
  if (signal.aborted && signal.reason instanceof ServiceError) return signal.reason;
  if (error instanceof ServiceError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? "";
  if (code === "ECONNREFUSED") return failure(options, `The ${options.subject} refused the connection.`, error);
  if (code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" || code === "EPIPE") {
    return failure(options, `The ${options.subject} closed the connection before sending the whole ${options.content}.`, error);
  }
  if (code === "ETIMEDOUT" || code === "EHOSTUNREACH" || code === "ENETUNREACH") {
    return failure(options, `The ${options.subject} could not be reached (${code}).`, error);
  }
  if (
    code.startsWith("ERR_TLS") ||
    code.startsWith("ERR_SSL") ||
    code.includes("CERT") ||
    code.includes("SELF_SIGNED") ||
    code === "EPROTO"
  ) {
    return failure(options, `The ${options.subject}'s TLS connection failed (${code}).`, error);
  }
  if (code.startsWith("HPE_")) return failure(options, `The ${options.subject} sent an invalid HTTP response.`, error);
  return failure(options, 
    `The ${options.content} could not be downloaded from the URL${code ? ` (${code})` : ""}.`,
    error,
  );
}
