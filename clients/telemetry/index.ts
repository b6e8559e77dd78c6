/**
 * @docservice/telemetry: the browser and Node client of DocService's usage
 * telemetry. Computes the reference client's document id, stamps DOCX files
 * so their id survives edits, and reports document opens to /v1/collect.
 */
export { computeDocumentId, CONTENT_ID_PATTERN, type DocumentIdentity, type DocumentMetadata } from "./document-id.js";
export { stampDocument, wordTimestamp, CUSTOM_PROPERTIES_FMTID, type StampOptions } from "./stamp.js";
export { openDocumentSession, type DocumentSession } from "./document-session.js";
export {
  createUsageTracker,
  COMMUNITY_LICENSE_KEY,
  DEFAULT_ENDPOINT,
  KEEPALIVE_MAX_BYTES,
  REPORT_TIMEOUT_MS,
  type CollectRequest,
  type DocumentOpenEvent,
  type FetchLike,
  type TelemetryDebugEvent,
  type TelemetryOptions,
  type UsageReport,
  type UsageTracker,
  type UsageTrackerOptions,
} from "./tracker.js";
export { boundMetadata, METADATA_LIMITS, type BoundedMetadata, type DropReason, type JsonValue, type Metadata, type MetadataDrop } from "./metadata.js";
export { type BrowserInfo } from "./browser-info.js";
export { crc32, crc32Hex } from "./crc32.js";
export { LIBRARY_VERSION } from "./version.js";
export { ZipError } from "./zip.js";
export { PackageError } from "./package-links.js";
