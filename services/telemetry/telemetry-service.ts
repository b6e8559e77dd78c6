import { randomBytes, randomUUID } from "node:crypto";
import type {
  AddLicenseKeyRequest,
  AddLicenseKeyResponse,
  CollectRequest,
  CollectResponse,
  GetUsageRequest,
  GetUsageResponse,
  LicenseKey,
  ListLicenseKeysResponse,
  RemoveLicenseKeyRequest,
  RemoveLicenseKeyResponse,
  TelemetryServiceService,
} from "../../gen/ts-proto/docservice/v1/telemetry.js";
import { METADATA_LIMITS } from "../../clients/telemetry/metadata.js";
import { ServiceError, validationError, type FieldIssue } from "../core/errors.js";
import type { UnaryApi } from "../grpc/unary-api.js";
import { usageReportFromCollectRequest } from "./intake/collect-request-check.js";
import { COMMUNITY_LICENSE_KEY, licenseKeyIssue } from "./license-keys/license-key.js";
import type { LicenseKeyInfo, LicenseKeyStore } from "./license-keys/license-key-store.js";
import type { UsageIntake } from "./intake/usage-intake.js";
import type { UsageRecord } from "./usage-record.js";
import type { UsageReport } from "./usage-report.js";
import type { UsageStore } from "./usage/usage-store.js";
import { countAccepted } from "./telemetry-metrics.js";
import { inSpan, mayRecord, SpanKind } from "../core/tracing.js";

export type TelemetryApi = UnaryApi<typeof TelemetryServiceService>;

/** The telemetry module's API: the service's RPCs, and a report that an edge has checked and converted (usage-report.ts). */
export interface TelemetryModuleApi extends TelemetryApi {
  accept(report: UsageReport): Promise<CollectResponse>;
}

/** How long a license key lookup is cached: a removed key is refused within this. */
const KEY_CACHE_MS = 5000;

/**
 * Usage telemetry: accepts reports (once durable), answers exact usage, and
 * manages the license keys allowed to report. The community key is always
 * accepted. No client address or cookie is ever stored.
 */
export class TelemetryService implements TelemetryModuleApi {
  private readonly knownKeys = new Map<string, { known: boolean; until: number }>();

  constructor(
    private readonly intake: UsageIntake,
    private readonly usageStore: UsageStore,
    private readonly licenseKeys: LicenseKeyStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Collect as gRPC and Connect callers reach it: the message is checked and
   * converted at this edge. A malformed license key is a VALIDATION_ERROR (400),
   * a well-formed one that is not registered UNAUTHENTICATED (401).
   */
  async collect(request: CollectRequest): Promise<CollectResponse> {
    return this.accept(usageReportFromCollectRequest(request, this.now().getTime()));
  }

  /** A report an edge has checked and converted (usage-report.ts): accepted once its license key is known and its events are durable. */
  async accept(report: UsageReport): Promise<CollectResponse> {
    if (!(await this.isKnown(report.licenseKey))) {
      throw new ServiceError("UNAUTHENTICATED", "Unknown license key: send a registered key in X-License-Key, or none for the community edition.");
    }
    const receivedAt = this.now().toISOString();
    const records = report.events.map(
      (event): UsageRecord => ({
        eventId: randomUUID(),
        licenseKey: report.licenseKey,
        documentId: event.documentId,
        documentCreatedAt: event.documentCreatedAt,
        openedAt: event.openedAt,
        receivedAt,
        libraryVersion: report.libraryVersion,
        hostname: report.hostname,
        metadata: report.metadata,
      }),
    );
    // the span's context travels with the records (their Kafka header), for the aggregator's span to link back to
    if (mayRecord()) await inSpan("store usage events", { kind: SpanKind.PRODUCER, attributes: { "docservice.usage.events": records.length } }, () => this.intake.accept(records));
    else await this.intake.accept(records);
    countAccepted(records.length);
    return { accepted: records.length, metadataDropped: [...report.metadataDropped] };
  }

  async getUsage(request: GetUsageRequest): Promise<GetUsageResponse> {
    requireLicenseKey(request.licenseKey);
    const key = request.groupBy ? groupByKey(request.groupBy) : undefined;
    const [usage, grouped] = await Promise.all([
      this.usageStore.usage(request.licenseKey, request.from, request.to),
      key === undefined ? undefined : this.usageStore.usageBy(request.licenseKey, request.from, request.to, key),
    ]);
    return {
      licenseKey: request.licenseKey,
      from: request.from,
      to: request.to,
      documents: usage.documents,
      documentsWithoutContentId: usage.documentsWithoutContentId,
      opens: usage.opens,
      byDay: usage.byDay,
      byMonth: usage.byMonth,
      firstSeen: timestampOf(usage.firstSeen),
      lastSeen: timestampOf(usage.lastSeen),
      grouped: grouped && { ...grouped, otherValues: grouped.otherValues && { value: "", ...grouped.otherValues } },
    };
  }

  async addLicenseKey(request: AddLicenseKeyRequest): Promise<AddLicenseKeyResponse> {
    const licenseKey = request.licenseKey || `lic_${randomBytes(18).toString("base64url")}`;
    const issues = licenseKeyIssues(licenseKey);
    if (licenseKey === COMMUNITY_LICENSE_KEY) issues.push({ field: "licenseKey", issue: "is the community key, which is always accepted" });
    const customer = request.customer ?? "";
    if (customer.length > 200) issues.push({ field: "customer", issue: "must be at most 200 characters" });
    if (issues.length > 0) throw validationError(issues);
    const key = await this.licenseKeys.add(licenseKey, customer);
    this.knownKeys.delete(licenseKey);
    return { key: licenseKeyMessage(key) };
  }

  async removeLicenseKey(request: RemoveLicenseKeyRequest): Promise<RemoveLicenseKeyResponse> {
    requireLicenseKey(request.licenseKey);
    const removed = await this.licenseKeys.remove(request.licenseKey);
    this.knownKeys.delete(request.licenseKey);
    return { removed };
  }

  async listLicenseKeys(): Promise<ListLicenseKeysResponse> {
    return { keys: (await this.licenseKeys.list()).map(licenseKeyMessage) };
  }

  health(): Promise<void> {
    return this.usageStore.health();
  }

  private async isKnown(licenseKey: string): Promise<boolean> {
    if (licenseKey === COMMUNITY_LICENSE_KEY) return true;
    const cached = this.knownKeys.get(licenseKey);
    if (cached && cached.until > Date.now()) return cached.known;
    const known = (await this.licenseKeys.find(licenseKey)) !== undefined;
    if (this.knownKeys.size > 10_000) this.knownKeys.clear();
    this.knownKeys.set(licenseKey, { known, until: Date.now() + KEY_CACHE_MS });
    return known;
  }
}

/** The range of google.protobuf.Timestamp in milliseconds: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. */
const TIMESTAMP_RANGE = { min: Date.parse("0001-01-01T00:00:00.000Z"), max: Date.parse("9999-12-31T23:59:59.999Z") };

/**
 * A stored first or last seen (ISO 8601) as the Date of a
 * google.protobuf.Timestamp, undefined when there is none or a Timestamp
 * cannot hold it. Times accepted before event times were held to
 * REPORT_LIMITS.eventTime may be anything from year 0 to 9999: year 0 is
 * outside Timestamp's range, which Connect's JSON encoder refuses (every
 * GetUsage of the key failed, 500, whatever its range), and a time before 1970
 * with milliseconds becomes negative nanos in ts-proto's encoding, which it
 * refuses too. Such a time is left out rather than clamped: a clamped time
 * would tell of an open nobody made as a fact, where an absent one says it is
 * not known, as for a key without opens (clients already expect that).
 */
function timestampOf(stored: string | undefined): Date | undefined {
  if (!stored) return undefined;
  const time = Date.parse(stored);
  const encodable = time >= TIMESTAMP_RANGE.min && time <= TIMESTAMP_RANGE.max && (time >= 0 || time % 1000 === 0);
  return encodable ? new Date(time) : undefined;
}

/** The metadata key of `groupBy=metadata.<key>`, or a VALIDATION_ERROR naming groupBy. */
function groupByKey(groupBy: string): string {
  const key = groupBy.startsWith("metadata.") ? groupBy.slice("metadata.".length) : "";
  if (key.length < 1 || key.length > METADATA_LIMITS.maxKeyChars) {
    throw validationError([{ field: "groupBy", issue: `must be metadata.<key>, with a key of 1 to ${METADATA_LIMITS.maxKeyChars} characters` }]);
  }
  return key;
}

function licenseKeyIssues(licenseKey: string): FieldIssue[] {
  const issue = licenseKeyIssue(licenseKey);
  return issue ? [{ field: "licenseKey", issue }] : [];
}

/** A license key that is given and well-formed, else a VALIDATION_ERROR: no store sees a key it could not hold. */
function requireLicenseKey(licenseKey: string): void {
  const issues = licenseKey ? licenseKeyIssues(licenseKey) : [{ field: "licenseKey", issue: "is required" }];
  if (issues.length > 0) throw validationError(issues);
}

function licenseKeyMessage(key: LicenseKeyInfo): LicenseKey {
  return { licenseKey: key.licenseKey, customer: key.customer, createdAt: key.createdAt };
}
