/**
 * The one place a SignRequest message becomes a {@link SignOrder}, and the one
 * place its values are checked: against the rules of sign-request-schema.ts,
 * under the field names of `POST /v1/sign`, every problem in one
 * VALIDATION_ERROR. The message is the same whoever sent it (the gateway, in
 * this process or over gRPC, or a gRPC or Connect client), so it is checked
 * here whoever sent it, and nowhere else.
 */
import type { z } from "zod";
import type { AuditEvent as AuditEventMessage, SignRequest } from "../../../gen/ts-proto/docservice/v1/signing.js";
import { validationError, type FieldIssue } from "../../core/errors.js";
import { isKeyId } from "../../access/key-id.js";
import { auditEventTypeName, type AuditEvent, type SignatureLevel, type Signer } from "../model.js";
import type { SignOrder } from "./sign-order.js";
import { auditEventsSchema, eventIdSchema, levelSchema, metadataJsonSchema, signerSchema, signRequestIssues } from "./sign-request-schema.js";

export interface SignOrderSettings {
  metadataMaxBytes: number;
  /** The level of a request that names none. */
  defaultLevel: SignatureLevel;
}

/** The order a message asks for; a VALIDATION_ERROR listing every problem when it breaks a rule. */
export function signOrderFromMessage(message: SignRequest, settings: SignOrderSettings): SignOrder {
  const issues: FieldIssue[] = [];
  const check = <T>(schema: z.ZodType<T>, value: unknown, field: string): T | undefined => {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    issues.push(...signRequestIssues(result.error, field));
    return undefined;
  };

  const { document } = message;
  if (!document || (document.content === undefined) === (document.url === undefined)) {
    issues.push({ field: "document", issue: "must have exactly one of base64 or url" });
  }
  // protobuf's "" is an absent ip or user agent
  const signer = message.signer && { email: message.signer.email, name: message.signer.name, ip: message.signer.ip || undefined, userAgent: message.signer.userAgent || undefined };
  check(signerSchema, signer, "signer");
  const events = message.auditTrail.map(modelEvent);
  check(auditEventsSchema, events, "auditTrail");
  // protobuf's "" is an absent eventId or level
  if (message.eventId) check(eventIdSchema, message.eventId, "eventId");
  // Set by the gateway or the gRPC guard, never by the client; part of the ledger's key, so checked all the same.
  if (message.callerKeyId && !isKeyId(message.callerKeyId)) issues.push({ field: "callerKeyId", issue: "must be an API key id (64 hex digits)" });
  const metadataJson = message.metadata === undefined ? undefined : check(metadataJsonSchema(settings.metadataMaxBytes), message.metadata, "metadata");
  // A level that needs the time-stamping authority this server lacks is the worker's to refuse (NOT_CONFIGURED), once it has read the document.
  const level = message.level ? check(levelSchema, message.level, "level") : settings.defaultLevel;
  if (issues.length > 0) throw validationError(issues);

  return {
    document: document!,
    signer: signer as Signer,
    // checked above: every type named, every time a Date
    events: events as AuditEvent[],
    ...(message.eventId ? { eventId: message.eventId } : {}),
    callerKeyId: message.callerKeyId,
    ...(metadataJson === undefined ? {} : { metadataJson }),
    certificatePage: message.certificate?.enabled ?? true,
    level: level!,
  };
}

/** An event in the model's terms, still to be checked: a type this build has no name for is left undefined, which the rules refuse. */
function modelEvent(event: AuditEventMessage) {
  return { type: auditEventTypeName(event.type), timestamp: event.timestamp, ...(event.data === undefined ? {} : { data: event.data }) };
}
