/**
 * The signing capability's own model of a signing: who signs and what they did
 * before signing. The API's representations (JSON names, protobuf enums) are
 * converted to and from it here, once.
 */
import { AuditEventType as AuditEventTypeMessage } from "../../gen/ts-proto/docservice/v1/signing.js";

export const AUDIT_EVENT_TYPES = ["ready", "scroll", "field_change", "submit"] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export interface AuditEvent {
  type: AuditEventType;
  timestamp: Date;
  data?: Record<string, unknown>;
}

/** PAdES baseline levels (ETSI EN 319 142-1), weakest first. */
export const SIGNATURE_LEVELS = ["B-B", "B-T", "B-LT", "B-LTA"] as const;
export type SignatureLevel = (typeof SIGNATURE_LEVELS)[number];

// What each level adds, stated once: the worker builds by these, and a level that
// needs a time-stamping authority this server lacks is refused by the first.

/** B-T and above carry a signature timestamp, so they need a time-stamping authority. */
export function needsTimestampAuthority(level: SignatureLevel): boolean {
  return level !== "B-B";
}

/** B-LT and B-LTA embed the revocation data of the signer's and the timestamps' chains (a DSS). */
export function embedsValidationData(level: SignatureLevel): boolean {
  return level === "B-LT" || level === "B-LTA";
}

/** B-LTA ends with a document timestamp over everything. */
export function addsDocumentTimestamp(level: SignatureLevel): boolean {
  return level === "B-LTA";
}

export interface Signer {
  name: string;
  email: string;
  ip?: string;
  userAgent?: string;
}

const MESSAGE_TYPES: Record<AuditEventType, AuditEventTypeMessage> = {
  ready: AuditEventTypeMessage.AUDIT_EVENT_TYPE_READY,
  scroll: AuditEventTypeMessage.AUDIT_EVENT_TYPE_SCROLL,
  field_change: AuditEventTypeMessage.AUDIT_EVENT_TYPE_FIELD_CHANGE,
  submit: AuditEventTypeMessage.AUDIT_EVENT_TYPE_SUBMIT,
};

export function auditEventTypeMessage(type: AuditEventType): AuditEventTypeMessage {
  return MESSAGE_TYPES[type];
}

/** The name of a protobuf event type; undefined for UNSPECIFIED and values this build does not know. */
export function auditEventTypeName(message: AuditEventTypeMessage): AuditEventType | undefined {
  return AUDIT_EVENT_TYPES.find((type) => MESSAGE_TYPES[type] === message);
}
