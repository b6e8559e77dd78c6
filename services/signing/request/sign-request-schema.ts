/**
 * The rules of a sign request. {@link signRequestSchema} is the contract of
 * `POST /v1/sign` as /openapi.json states it, and the answer to a body the
 * gateway cannot put into a SignRequest message (sign-message-from-json.ts).
 * Its parts about values (signer, audit trail, metadata, eventId, level) are
 * what SigningService checks every SignRequest against, once, as it makes its
 * SignOrder (sign-order-from-message.ts): the same rules, field names and
 * issues, whichever way the request came. Every problem becomes one
 * `{field, issue}` ({@link signRequestIssues}).
 */
import { z } from "zod";
import type { FieldIssue } from "../../core/errors.js";
import { fieldIssues, type FieldIssueOptions } from "../../core/field-issues.js";
import { CONTROL_CHARACTERS_ISSUE, NO_CONTROL_CHARACTERS } from "../../core/identifier.js";
import { jsonShapeViolation, MAX_JSON_DEPTH } from "../../core/json-shape.js";
import { SIGNATURE_LEVELS } from "../model.js";
import { normalizeEmail } from "../../core/email-address.js";
import { documentSchema } from "../../request-body/document-body.js";

export const MAX_AUDIT_EVENTS = 10_000;
/** UTF-16 units, so at most 600 bytes of UTF-8: with the caller's key id, a ledger key stays far below LMDB's 1,978 bytes. */
export const MAX_EVENT_ID_CHARS = 200;

const TIMESTAMP_ISSUE = "must be an ISO 8601 UTC time, e.g. 2026-11-21T09:30:00Z";
/** An event's time as JSON writes it. */
export const isoTimestamp = z.iso.datetime({ error: TIMESTAMP_ISSUE });
/** An event's time as the message carries it: a time {@link isoTimestamp} can write (a four-digit year). */
const utcTime = z.date({ error: TIMESTAMP_ISSUE }).refine((date) => date.getUTCFullYear() >= 0 && date.getUTCFullYear() <= 9999, TIMESTAMP_ISSUE);
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const fieldValue = z.union([scalar, z.array(scalar)], { error: "must be a string, number, boolean, null or an array of them" });

/**
 * `schema`, also refusing a value nested deeper than MAX_JSON_DEPTH (the issue
 * names the place, e.g. auditTrail[0].data.a.b…) and then running no further
 * check: the schemas here look one level into free-form JSON, but the
 * JSON.stringify and safe-stable-stringify that follow go all the way down.
 */
export function withinJsonDepth<T extends z.ZodType>(schema: T): T {
  return schema.check((ctx) => {
    const violation = jsonShapeViolation(ctx.value);
    if (violation) ctx.issues.push({ code: "custom", message: violation.issue, path: violation.path, input: ctx.value, continue: false });
  });
}

// A record parsed by zod is a copy made by assignment, on which a "__proto__" key
// would silently vanish: refused instead of dropped.
export const dataObject = withinJsonDepth(
  z
    .unknown()
    .refine((value) => typeof value !== "object" || value === null || !Object.hasOwn(value, "__proto__"), "must not have a key named __proto__")
    .pipe(z.record(z.string(), z.unknown(), { error: "must be an object" })),
).meta({ type: "object", additionalProperties: {}, description: `Free-form; objects and arrays nested at most ${MAX_JSON_DEPTH} levels deep.` });

/** An audit event, its time as `timestamp` checks it. */
const auditEventOf = <T extends z.ZodType>(timestamp: T) => z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("ready"), timestamp, data: dataObject.optional() }),
    z.strictObject({
      type: z.literal("scroll"),
      timestamp,
      data: withinJsonDepth(z.looseObject({ percent: z.number({ error: "must be a number from 0 to 100" }).min(0).max(100) })),
    }),
    z.strictObject({
      type: z.literal("field_change"),
      timestamp,
      data: withinJsonDepth(
        z.looseObject({
          fieldId: z.string({ error: "must be a non-empty string" }).min(1, "must be a non-empty string").max(200),
          value: fieldValue,
          previousValue: fieldValue.optional(),
        }),
      ),
    }),
    z.strictObject({ type: z.literal("submit"), timestamp, data: dataObject.optional() }),
  ],
  { error: "must be one of ready, scroll, field_change, submit" },
);

const auditTrailOf = <T extends z.ZodType>(timestamp: T) => z
  .array(auditEventOf(timestamp), { error: "must be an array of events" })
  .min(1, "must have at least one event")
  .max(MAX_AUDIT_EVENTS, `must have at most ${MAX_AUDIT_EVENTS} events`)
  // `when`: also reported when some events are malformed, so one answer lists every problem.
  .refine((events) => events.some((event) => event?.type === "submit"), {
    message: "must contain at least one submit event",
    when: (payload) => Array.isArray(payload.value) && payload.value.length > 0,
  })
  .meta({ contains: { type: "object", required: ["type"], properties: { type: { const: "submit" } } } });

/** The audit trail of a JSON body, times as ISO 8601 text. */
export const auditTrailSchema = auditTrailOf(isoTimestamp);
/** The audit trail of a message (events already named by the model), times as Dates. */
export const auditEventsSchema = auditTrailOf(utcTime);

const optionalText = (max: number) => z.string().max(max, `must be at most ${max} characters`).optional();

export const signerSchema = z.strictObject(
  {
    email: z
      .string({ error: "is required" })
      .refine((value) => normalizeEmail(value) !== undefined, "must be a valid e-mail address")
      .meta({ format: "email", maxLength: 254 }),
    name: z
      .string({ error: "is required" })
      .refine((value) => value.trim().length >= 2, "must be at least 2 characters")
      .refine((value) => value.length <= 255, "must be at most 255 characters"),
    ip: z.union([z.ipv4(), z.ipv6()], { error: "must be an IPv4 or IPv6 address" }).optional(),
    userAgent: optionalText(1000),
  },
  { error: "is required" },
);

export const eventIdSchema = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty")
  .max(MAX_EVENT_ID_CHARS, `must be at most ${MAX_EVENT_ID_CHARS} characters`)
  .regex(NO_CONTROL_CHARACTERS, CONTROL_CHARACTERS_ISSUE);

const metadataSizeIssue = (maxBytes: number) => `must be at most ${maxBytes} bytes as JSON`;

export function metadataSchema(maxBytes: number) {
  return dataObject
    .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= maxBytes, metadataSizeIssue(maxBytes))
    .meta({ description: `Free-form JSON object: at most ${maxBytes} bytes as JSON, objects and arrays nested at most ${MAX_JSON_DEPTH} levels deep.` });
}

/**
 * {@link metadataSchema}'s rules, its output the metadata's JSON: written
 * once, measured, and the very text the signed document will hold.
 */
export function metadataJsonSchema(maxBytes: number) {
  return dataObject
    .transform((value) => JSON.stringify(value))
    .pipe(z.string().refine((json) => Buffer.byteLength(json) <= maxBytes, metadataSizeIssue(maxBytes)));
}

export const levelSchema = z
  .enum(SIGNATURE_LEVELS, { error: `must be one of ${SIGNATURE_LEVELS.join(", ")}` })
  .meta({ description: "PAdES baseline level; default the server's SIGNING_LEVEL." });

export function signRequestSchema(limits: { metadataMaxBytes: number }) {
  return z.strictObject(
    {
      document: documentSchema,
      signer: signerSchema,
      auditTrail: auditTrailSchema,
      eventId: eventIdSchema.optional(),
      metadata: metadataSchema(limits.metadataMaxBytes).optional(),
      certificate: z.strictObject({ enabled: z.boolean({ error: "must be true or false" }).optional() }, { error: "must be an object" }).optional(),
      level: levelSchema.optional(),
    },
    { error: "must be a JSON object" },
  );
}

export const verifyRequestSchema = z.strictObject({ document: documentSchema }, { error: "must be a JSON object" });

export type SignRequestJson = z.output<ReturnType<typeof signRequestSchema>>;
export type AuditEventJson = z.output<typeof auditTrailSchema>[number];

/** The problems of a sign request (or of the part at `prefix`), an unknown signer field pointed to `metadata`. */
export function signRequestIssues(error: z.ZodError, prefix?: string): FieldIssue[] {
  return fieldIssues(error, { prefix, ...SIGN_REQUEST_ISSUES });
}

/** How a sign request's problems are written: an unknown signer field is pointed to `metadata`. */
export const SIGN_REQUEST_ISSUES: FieldIssueOptions = { unknownFieldAdvice: { signer: "put application data in metadata" } };
