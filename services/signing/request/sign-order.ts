/**
 * A sign request as the signing capability works with it, whichever way it
 * came (POST /v1/sign, gRPC, Connect): checked, with every default applied, in
 * the model's own terms. It is made once, from the SignRequest message
 * ({@link signOrderFromMessage}); from then on nothing is checked or
 * converted again, and the parts the worker needs cross to it as they are.
 */
import type { DocumentSource } from "../../fetch/document-fetcher.js";
import type { AuditEvent, SignatureLevel, Signer } from "../model.js";

export interface SignOrder {
  /** Exactly one of its bytes and its URL. */
  document: DocumentSource;
  signer: Signer;
  /** The signer's session, in order; at least one submit event. */
  events: AuditEvent[];
  /** Makes the request idempotent per caller; absent when the caller sent none. */
  eventId?: string;
  /** The authenticated caller's API key id ("" when none was set); scopes `eventId`. */
  callerKeyId: string;
  /**
   * The caller's metadata as JSON, written once here: the worker writes this
   * text to the document information and into the audit trail as it is.
   */
  metadataJson?: string;
  /** Whether a document not signed yet gets the audit-trail certificate page. */
  certificatePage: boolean;
  level: SignatureLevel;
}
