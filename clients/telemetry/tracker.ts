/**
 * Document-open reports for usage-based billing, compatible with the
 * reference client: one POST per opened document, fire and forget. A report
 * never throws, never blocks, is never retried or queued, and logs nothing.
 */
import { browserInfo, pageOrigin, type BrowserInfo } from "./browser-info.js";
import { computeDocumentId, type DocumentIdentity } from "./document-id.js";
import { openDocumentSession, type DocumentSession } from "./document-session.js";
import { asJson, boundMetadata, type Metadata, type MetadataDrop } from "./metadata.js";
import { eventTimeWindow, isWithinEventTimeWindow } from "./report-limits.js";
import { LIBRARY_VERSION } from "./version.js";

/** The key of community and evaluation use, sent when no license key is configured. */
export const COMMUNITY_LICENSE_KEY = "community-and-eval-agplv3";

/**
 * The collect route on the origin of the page the editor runs in: reports go
 * to the application's own server (which serves DocService there, or passes
 * them on: SPEC 4.5, rule 3), never to the end user's machine. Outside a
 * browser there is no page, so nothing is sent until `telemetry.endpoint`
 * names a full URL.
 */
export const DEFAULT_ENDPOINT = "/v1/collect";

/**
 * The most a report may weigh to be sent with `keepalive` (which lets it
 * outlive the page that sends it): browsers allow 64 KiB for all of a page's
 * keepalive requests in flight together. A heavier report is sent without it.
 */
export const KEEPALIVE_MAX_BYTES = 32 * 1024;

/** How long a report may take before it is abandoned, so a dead collector cannot hold a Node process open. */
export const REPORT_TIMEOUT_MS = 10_000;

/** What the tracker tells an optional `telemetry.debug` hook. */
export type TelemetryDebugEvent = { readonly type: "metadata-dropped"; readonly dropped: readonly MetadataDrop[] };

export interface TelemetryOptions {
  /** Default true. When false no request is ever made; `trackOpen` still returns the document id. */
  readonly enabled?: boolean;
  /**
   * Where reports are POSTed: the collect route's full URL (e.g.
   * "https://docs.example.com/v1/collect"), or a path on the page's origin;
   * default DEFAULT_ENDPOINT.
   */
  readonly endpoint?: string;
  /**
   * Sent with every report: any JSON, within METADATA_LIMITS (metadata.ts, the
   * same definition /v1/collect applies). What exceeds them, or is not JSON,
   * is left out and the report still goes; `debug` hears what was left out.
   */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Called, when set, with what the tracker left out (once, when it is created). */
  readonly debug?: (event: TelemetryDebugEvent) => void;
  /** @deprecated Use the root `licenseKey`, which wins when both are set. */
  readonly licenseKey?: string;
}

export interface CollectRequest {
  readonly method: "POST";
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly credentials: "omit";
  readonly mode: "cors";
  readonly keepalive: boolean;
  readonly signal?: AbortSignal;
}

/** The subset of `fetch` the tracker uses; its result is ignored. */
export type FetchLike = (url: string, init: CollectRequest) => unknown;

export interface UsageTrackerOptions {
  /** The license key sent as X-License-Key; default COMMUNITY_LICENSE_KEY. */
  readonly licenseKey?: string;
  readonly telemetry?: TelemetryOptions;
  /** The transport; default `globalThis.fetch`, looked up at each report. */
  readonly fetch?: FetchLike;
}

export interface DocumentOpenEvent {
  /** When the document was opened, ISO 8601 with milliseconds. */
  readonly timestamp: string;
  readonly documentId: string;
  readonly documentCreatedAt: string | null;
}

/** The JSON body of one report. */
export interface UsageReport {
  readonly libraryVersion: string;
  readonly browserInfo: BrowserInfo;
  readonly metadata?: Metadata;
  readonly events: readonly DocumentOpenEvent[];
}

export interface UsageTracker {
  /** False when `telemetry.enabled` is false: nothing is ever sent. */
  readonly enabled: boolean;
  readonly endpoint: string;
  readonly licenseKey: string;
  /**
   * Reports one open of a document: its DOCX bytes (the id is computed here)
   * or an id computed earlier. Returns the document's identity, or null when
   * `document` is neither. Never throws and never waits for the network.
   */
  trackOpen(document: Uint8Array | ArrayBuffer | DocumentIdentity): DocumentIdentity | null;
  /**
   * Opens a DOCX: reports the open (when enabled) and returns its session,
   * whose `stamp` gives every export of it the same GUID and created time
   * (see document-session.ts), enabled or not. Null when `docx` is not bytes.
   * Never throws and never waits for the network.
   */
  openDocument(docx: Uint8Array | ArrayBuffer): DocumentSession | null;
}

const nonEmpty = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** The configured metadata as it will be sent: JSON within METADATA_LIMITS; `debug` hears what was left out. */
function reportMetadata(metadata: unknown, debug: TelemetryOptions["debug"]): Metadata | undefined {
  const json = asJson(metadata);
  const bounded = boundMetadata(json.json);
  const dropped = [...json.dropped, ...bounded.dropped];
  if (dropped.length > 0 && typeof debug === "function") {
    try {
      debug({ type: "metadata-dropped", dropped });
    } catch {
      // a failing hook must not stop the tracker
    }
  }
  return bounded.metadata;
}

function identify(document: unknown): DocumentIdentity | null {
  if (document instanceof ArrayBuffer || ArrayBuffer.isView(document)) return computeDocumentId(document as Uint8Array);
  if (document && typeof document === "object") {
    const { documentId, documentCreatedAt } = document as Partial<Record<keyof DocumentIdentity, unknown>>;
    if (nonEmpty(documentId)) return { documentId: documentId as string, documentCreatedAt: nonEmpty(documentCreatedAt) ?? null };
  }
  return null;
}

const ignore = (): void => undefined;

/** Frees the connection of a response nobody reads. */
function discard(response: unknown): void {
  try {
    const body = (response as { body?: { cancel?: () => Promise<void> } } | null)?.body;
    body?.cancel?.().catch(ignore);
  } catch {
    // nothing to free
  }
}

/** `endpoint` as an absolute URL: itself, or resolved against the page's origin; undefined outside a page when it is not absolute. */
function resolveEndpoint(endpoint: string): string | undefined {
  try {
    return new URL(endpoint).href;
  } catch {
    // relative: needs a page
  }
  const origin = pageOrigin();
  try {
    return origin ? new URL(endpoint, origin).href : undefined;
  } catch {
    return undefined;
  }
}

function timeoutSignal(): AbortSignal | undefined {
  return typeof AbortSignal !== "undefined" && typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(REPORT_TIMEOUT_MS) : undefined;
}

export function createUsageTracker(options: UsageTrackerOptions = {}): UsageTracker {
  const telemetry: TelemetryOptions = options?.telemetry ?? {};
  const enabled = telemetry.enabled !== false;
  const endpoint = nonEmpty(telemetry.endpoint) ?? DEFAULT_ENDPOINT;
  const licenseKey = nonEmpty(options?.licenseKey) ?? nonEmpty(telemetry.licenseKey) ?? COMMUNITY_LICENSE_KEY;
  const metadata = reportMetadata(telemetry.metadata, telemetry.debug);
  const transport = options?.fetch;

  function send(identity: DocumentIdentity): void {
    const fetch = transport ?? (globalThis as { fetch?: FetchLike }).fetch;
    const url = resolveEndpoint(endpoint);
    if (typeof fetch !== "function" || url === undefined) return;
    // A clock that dates the open before REPORT_LIMITS.eventTime.earliest is wrong, and the platform would refuse the report.
    const now = Date.now();
    if (!isWithinEventTimeWindow(eventTimeWindow(now), now)) return;
    const report: UsageReport = {
      libraryVersion: LIBRARY_VERSION,
      browserInfo: browserInfo(),
      ...(metadata && { metadata }),
      events: [{ timestamp: new Date(now).toISOString(), documentId: identity.documentId, documentCreatedAt: identity.documentCreatedAt }],
    };
    const body = JSON.stringify(report);
    const pending = fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-License-Key": licenseKey },
      body,
      credentials: "omit",
      mode: "cors",
      keepalive: new TextEncoder().encode(body).length <= KEEPALIVE_MAX_BYTES,
      signal: timeoutSignal(),
    });
    Promise.resolve(pending).then(discard, ignore);
  }

  return {
    enabled,
    endpoint,
    licenseKey,
    trackOpen(document) {
      let identity: DocumentIdentity | null = null;
      try {
        identity = identify(document);
        if (identity && enabled) send(identity);
      } catch {
        // telemetry must never break the application
      }
      return identity;
    },
    openDocument(docx) {
      if (!(docx instanceof ArrayBuffer || ArrayBuffer.isView(docx))) return null;
      let session: DocumentSession | null = null;
      try {
        session = openDocumentSession(docx);
        if (enabled) send(session);
      } catch {
        // telemetry must never break the application
      }
      return session;
    },
  };
}
