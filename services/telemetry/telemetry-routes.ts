import { z } from "zod";
import type { LicenseKey } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import { validationError } from "../core/errors.js";
import { fieldIssues } from "../core/field-issues.js";
import { collectRequestJsonSchema, usageReportFromJson } from "./intake/collect-request-schema.js";
import { usageCsv } from "./usage-csv.js";
import { COMMUNITY_LICENSE_KEY, licenseKeyIssue, licenseKeyJsonSchema } from "./license-keys/license-key.js";
import type { TelemetryModuleApi } from "./telemetry-service.js";
import { readJsonBody } from "../request-body/json-body.js";
import { queryValue, queryValues, type RequestContext, type Route } from "../contracts/route.js";

export interface TelemetryRouteLimits {
  /** Of a report's body and of a license key's (services/core/message-limits.ts). */
  collectBodyBytes: number;
  licenseKeyBodyBytes: number;
}

const adminErrors = {
  401: "The admin token is missing or wrong.",
  403: "Admin calls are disabled (DOCSERVICE_ADMIN_TOKEN is not set).",
};

const licenseKeySchema = {
  type: "object",
  required: ["licenseKey", "customer", "createdAt"],
  properties: { licenseKey: { type: "string" }, customer: { type: "string" }, createdAt: { type: "string", format: "date-time" } },
};

const licenseKeyRequest = z.object(
  { licenseKey: z.string({ error: "must be a string" }).optional(), customer: z.string({ error: "must be a string" }).optional() },
  { error: "must be a JSON object" },
);

/**
 * X-License-Key, the community key when absent or empty. A malformed one is a
 * 400 naming the header, before the body is read: the gRPC edge names its own
 * field (licenseKey), which a /v1 client never sent.
 */
function licenseKeyHeader(context: RequestContext): string {
  const header = context.request.headers["x-license-key"];
  const licenseKey = (Array.isArray(header) ? header[0] : header)?.trim() ?? "";
  const issue = licenseKey && licenseKeyIssue(licenseKey);
  if (issue) throw validationError([{ field: "X-License-Key", issue }]);
  return licenseKey || COMMUNITY_LICENSE_KEY;
}

const licenseKeyJson = (key: LicenseKey | undefined) => ({ licenseKey: key?.licenseKey, customer: key?.customer, createdAt: key?.createdAt?.toISOString() });

const countsSchema = (key: string) => ({
  type: "object",
  required: [key, "documents", "documentsWithoutContentId", "opens"],
  properties: { [key]: { type: "string" }, documents: { type: "integer" }, documentsWithoutContentId: { type: "integer" }, opens: { type: "integer" } },
});

const groupSchema = {
  type: "object",
  required: ["value", "documents", "opens", "byMonth"],
  properties: {
    value: { type: "string", description: "The value as text: a string as it is, anything else as JSON (`5`, `true`, `null`, `{\"plan\":\"pro\"}`)." },
    documents: { type: "integer", description: "Exact distinct documents over the range." },
    opens: { type: "integer" },
    byMonth: {
      type: "array",
      items: { type: "object", required: ["month", "documents", "opens"], properties: { month: { type: "string" }, documents: { type: "integer" }, opens: { type: "integer" } } },
    },
  },
};

/** Whether the caller asked for CSV (`Accept: text/csv`) rather than JSON. */
const wantsCsv = (context: RequestContext) => /\btext\/csv\b/i.test(String(context.request.headers.accept ?? ""));

/** /v1/collect (public, CORS), /v1/usage and /v1/admin/license-keys (admin token). */
export function telemetryRoutes(telemetry: TelemetryModuleApi, limits: TelemetryRouteLimits): Route[] {
  return [
    {
      method: "POST",
      path: "/v1/collect",
      operationId: "collect",
      summary:
        "Report opened documents (1–100 events) for usage-based billing. `X-License-Key` names the license (none: the community key). " +
        "Answered 202 once the events are durable. Callable cross-origin (CORS, no credentials).",
      cors: true,
      headers: [{ name: "X-License-Key", description: "The license key; absent or empty: the community key.", required: false, schema: licenseKeyJsonSchema }],
      requestBody: { contentType: "application/json", schema: collectRequestJsonSchema },
      successStatus: 202,
      responseSchema: {
        type: "object",
        required: ["accepted"],
        properties: {
          accepted: { type: "integer" },
          metadataDropped: {
            type: "array",
            description: "What was left out of `metadata` to keep it within its limits (at most 16 listed); absent when nothing was.",
            items: { type: "object", required: ["path", "reason"], properties: { path: { type: "string" }, reason: { type: "string" } } },
          },
        },
      },
      errors: {
        400: "The body or X-License-Key breaks a rule of its schema; `details` lists every problem.",
        401: "The license key is well-formed but not registered.",
        413: `The body is larger than ${limits.collectBodyBytes} bytes.`,
        415: "The body is not JSON.",
        503: "The events cannot be stored right now (Kafka away and the local spool full); see Retry-After.",
      },
      async handle(context) {
        // The body is checked and converted here, once: the report reaches the service as a UsageReport (usage-report.ts).
        // The event times accepted are decided as the request arrives (eventTimeWindow), however long its body takes.
        const arrived = Date.now();
        const licenseKey = licenseKeyHeader(context);
        const response = await telemetry.accept(usageReportFromJson(await readJsonBody(context.request, limits.collectBodyBytes), licenseKey, arrived));
        const { accepted, metadataDropped } = response;
        return { status: 202, body: metadataDropped.length > 0 ? { accepted, metadataDropped } : { accepted } };
      },
    },
    {
      method: "GET",
      path: "/v1/usage",
      operationId: "getUsage",
      summary:
        "Exact usage of a license key over a range of UTC days (inclusive): distinct documents and opens, per day and per month. " +
        "A document is its `documentId`, whatever metadata its reports carry. `groupBy=metadata.<key>` also counts per value of that metadata key (a tenant, a plan). " +
        "`Accept: text/csv` answers the same as CSV, for invoicing.",
      query: [
        { name: "licenseKey", description: "The license key.", required: true, schema: licenseKeyJsonSchema },
        { name: "from", description: "First UTC day, YYYY-MM-DD.", required: true, schema: { type: "string", format: "date" } },
        { name: "to", description: "Last UTC day, YYYY-MM-DD (at most 400 days in all, 31 with groupBy).", required: true, schema: { type: "string", format: "date" } },
        { name: "groupBy", description: "`metadata.<key>`: documents and opens per value of that top-level metadata key.", required: false, schema: { type: "string", pattern: "^metadata\\..{1,64}$" } },
      ],
      successStatus: 200,
      responseContentTypes: ["application/json", "text/csv"],
      responseSchema: {
        type: "object",
        required: ["licenseKey", "from", "to", "documents", "documentsWithoutContentId", "opens", "byDay", "byMonth"],
        properties: {
          licenseKey: { type: "string" },
          from: { type: "string", format: "date" },
          to: { type: "string", format: "date" },
          documents: { type: "integer", description: "Exact distinct documents over the whole range." },
          documentsWithoutContentId: {
            type: "integer",
            description:
              "Of them, those whose id is not a content id (SPEC 4.6; `HASH-` and 8 hex digits): an application's own id, or a random one per open (the reference editor's default), which bills every open of a file as a document.",
          },
          opens: { type: "integer" },
          byDay: { type: "array", items: countsSchema("date") },
          byMonth: { type: "array", items: countsSchema("month"), description: "Whole calendar months the range touches." },
          firstSeen: {
            type: "string",
            format: "date-time",
            description:
              "When the license key's first open happened, in or before the range: its whole history, not only the range's. " +
              "Absent when there was none, or when it is a time a protobuf Timestamp cannot hold (accepted before event times were bounded).",
          },
          lastSeen: {
            type: "string",
            format: "date-time",
            description: "When the license key's latest open happened, in or after the range: its whole history, not only the range's. Absent likewise.",
          },
          grouped: {
            type: "object",
            description: "With groupBy: per value of the key, most documents first.",
            required: ["key", "groups"],
            properties: {
              key: { type: "string" },
              groups: { type: "array", items: groupSchema },
              otherValues: { ...groupSchema, description: "The values after the first 1,000 of a month, counted together (value empty)." },
            },
          },
        },
      },
      errors: { 400: "A parameter is missing, not a well-formed license key or not a valid date range.", ...adminErrors, 503: "The usage store is unavailable." },
      async handle(context) {
        const usage = await telemetry.getUsage(queryValues(context, ["licenseKey", "from", "to", "groupBy"]));
        if (wantsCsv(context)) return { status: 200, body: Buffer.from(usageCsv(usage)), contentType: "text/csv; charset=utf-8" };
        return {
          status: 200,
          body: {
            licenseKey: usage.licenseKey,
            from: usage.from,
            to: usage.to,
            documents: usage.documents,
            documentsWithoutContentId: usage.documentsWithoutContentId,
            opens: usage.opens,
            byDay: usage.byDay,
            byMonth: usage.byMonth,
            ...(usage.firstSeen ? { firstSeen: usage.firstSeen.toISOString() } : {}),
            ...(usage.lastSeen ? { lastSeen: usage.lastSeen.toISOString() } : {}),
            ...(usage.grouped ? { grouped: usage.grouped } : {}),
          },
        };
      },
    },
    {
      method: "POST",
      path: "/v1/admin/license-keys",
      operationId: "addLicenseKey",
      summary: "Register a license key that may report usage (`licenseKey` omitted: one is generated). Registering an existing key returns it unchanged.",
      requestBody: {
        contentType: "application/json",
        schema: {
          type: "object",
          properties: {
            licenseKey: { anyOf: [{ const: "" }, licenseKeyJsonSchema], description: `${licenseKeyJsonSchema.description} Omitted or empty: one is generated.` },
            customer: { type: "string", maxLength: 200 },
          },
        },
      },
      successStatus: 201,
      responseSchema: licenseKeySchema,
      errors: {
        400: "The key or customer is not valid.",
        ...adminErrors,
        413: `The body is larger than ${limits.licenseKeyBodyBytes} bytes.`,
        415: "The body is not JSON.",
        503: "The key store is unavailable.",
      },
      async handle(context) {
        const body = licenseKeyRequest.safeParse(await readJsonBody(context.request, limits.licenseKeyBodyBytes));
        if (!body.success) throw validationError(fieldIssues(body.error));
        const response = await telemetry.addLicenseKey({ licenseKey: body.data.licenseKey, customer: body.data.customer });
        return { status: 201, body: licenseKeyJson(response.key) };
      },
    },
    {
      method: "GET",
      path: "/v1/admin/license-keys",
      operationId: "listLicenseKeys",
      summary: "Every registered license key.",
      successStatus: 200,
      responseSchema: { type: "object", required: ["keys"], properties: { keys: { type: "array", items: licenseKeySchema } } },
      errors: { ...adminErrors, 503: "The key store is unavailable." },
      async handle() {
        const response = await telemetry.listLicenseKeys({});
        return { status: 200, body: { keys: response.keys.map(licenseKeyJson) } };
      },
    },
    {
      method: "DELETE",
      path: "/v1/admin/license-keys",
      operationId: "removeLicenseKey",
      summary: "Remove a license key: its reports are refused from then on (within seconds on every replica).",
      query: [{ name: "licenseKey", description: "The key to remove.", required: true, schema: licenseKeyJsonSchema }],
      successStatus: 200,
      responseSchema: { type: "object", required: ["removed"], properties: { removed: { type: "boolean" } } },
      errors: { 400: "`licenseKey` is missing or not a well-formed license key.", ...adminErrors, 503: "The key store is unavailable." },
      async handle(context) {
        const response = await telemetry.removeLicenseKey({ licenseKey: queryValue(context, "licenseKey") });
        return { status: 200, body: { removed: response.removed } };
      },
    },
  ];
}
