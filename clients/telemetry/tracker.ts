/**
 * Document-open reports for usage-based billing, compatible with the
 * reference client: one POST per opened document, fire and forget. A report
 * never throws, never blocks, is never retried or queued, and logs nothing.
 */
import { browserInfo, type BrowserInfo } from "./browser-info.js";
import { computeDocumentId, type DocumentIdentity } from "./document-id.js";
import { LIBRARY_VERSION } from "./version.js";

/** The key of community and evaluation use, sent when no license key is configured. */
export const COMMUNITY_LICENSE_KEY = "community-and-eval-agplv3";

/** The collect route of a DocService started with `npm start`; set `telemetry.endpoint` for any other deployment. */
export const DEFAULT_ENDPOINT = "http://localhost:8080/v1/collect";

/** How long a report may take before it is abandoned, so a dead collector cannot hold a Node process open. */
export const REPORT_TIMEOUT_MS = 10_000;

export type MetadataValue = string | number | boolean | null;

export interface TelemetryOptions {
  /** Default true. When false no request is ever made; `trackOpen` still returns the document id. */
  readonly enabled?: boolean;
  /** The full URL reports are POSTed to (the collect route, e.g. "https://docs.example.com/v1/collect"). */
  readonly endpoint?: string;
  /** A flat map sent with every report; values that are not strings, finite numbers, booleans or null are left out. */
  readonly metadata?: Readonly<Record<string, MetadataValue>>;
  /** @deprecated Use the root `licenseKey`, which wins when both are set. */
  readonly licenseKey?: string;
}

export interface CollectRequest {
  readonly method: "POST";
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly credentials: "omit";
  readonly mode: "cors";
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
  readonly metadata?: Readonly<Record<string, MetadataValue>>;
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
}

const nonEmpty = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

function flatMetadata(metadata: unknown): Record<string, MetadataValue> | undefined {
  if (!metadata || typeof metadata !== "object") return undefined;
  const flat: Record<string, MetadataValue> = {};
  for (const [key, value] of Object.entries(metadata)) {
    const primitive =
      value === null || typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value));
    if (primitive) flat[key] = value as MetadataValue;
  }
  return flat;
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

function timeoutSignal(): AbortSignal | undefined {
  return typeof AbortSignal !== "undefined" && typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(REPORT_TIMEOUT_MS) : undefined;
}

export function createUsageTracker(options: UsageTrackerOptions = {}): UsageTracker {
  const telemetry: TelemetryOptions = options?.telemetry ?? {};
  const enabled = telemetry.enabled !== false;
  const endpoint = nonEmpty(telemetry.endpoint) ?? DEFAULT_ENDPOINT;
  const licenseKey = nonEmpty(options?.licenseKey) ?? nonEmpty(telemetry.licenseKey) ?? COMMUNITY_LICENSE_KEY;
  const metadata = flatMetadata(telemetry.metadata);
  const transport = options?.fetch;

  function send(identity: DocumentIdentity): void {
    const fetch = transport ?? (globalThis as { fetch?: FetchLike }).fetch;
    if (typeof fetch !== "function") return;
    const report: UsageReport = {
      libraryVersion: LIBRARY_VERSION,
      browserInfo: browserInfo(),
      ...(metadata && { metadata }),
      events: [{ timestamp: new Date().toISOString(), documentId: identity.documentId, documentCreatedAt: identity.documentCreatedAt }],
    };
    const pending = fetch(endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-License-Key": licenseKey },
      body: JSON.stringify(report),
      credentials: "omit",
      mode: "cors",
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
  };
}
