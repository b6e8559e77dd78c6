/**
 * A `POST /v1/sign` body made into the SignRequest message the gateway hands
 * to SigningService, in-process or over gRPC. The gateway checks here only
 * what the message could not carry faithfully, and leaves every rule about the
 * values to the service, which checks each once as it makes its SignOrder
 * (sign-order-from-message.ts). A body the message cannot carry never reaches
 * the service: it is answered here with every problem it has, as the contract
 * ({@link signRequestSchema}) states them.
 */
import { z } from "zod";
import type { SignRequest } from "../../../gen/ts-proto/docservice/v1/signing.js";
import { validationError } from "../../core/errors.js";
import { auditEventTypeMessage } from "../model.js";
import { BASE64 } from "../../request-body/document-body.js";
import { dataObject, isoTimestamp, signRequestIssues, withinJsonDepth, type signRequestSchema } from "./sign-request-schema.js";

/**
 * What a body must be for the message to carry it: no field the message has
 * no place for; each field of its type; event names the enum has; times a
 * Timestamp holds; free-form data a Struct holds; no "" where the message's
 * "" means absent (eventId, level, signer.ip). Every body refused here is
 * refused by {@link signRequestSchema} too, which names the problems.
 *
 * Free-form data is the exception to "no rule here": its depth (a Struct is
 * written by recursion) and a top-level "__proto__" key (which the Struct
 * would drop without a word) must be settled before the message is encoded
 * for gRPC, so the gateway checks them, and the service again, for the
 * callers that reach it directly.
 */
const signRequestWireSchema = z.strictObject({
  document: z.strictObject({ base64: z.string().min(1).regex(BASE64).optional(), url: z.string().min(1).optional() }),
  signer: z.strictObject({ email: z.string(), name: z.string(), ip: z.string().min(1).optional(), userAgent: z.string().optional() }),
  auditTrail: z.array(
    z.discriminatedUnion("type", [
      z.strictObject({ type: z.enum(["ready", "submit"]), timestamp: isoTimestamp, data: dataObject.optional() }),
      // their data is checked by the service; here only what a Struct needs (a copy, as JSON objects are copied by every parse)
      z.strictObject({ type: z.enum(["scroll", "field_change"]), timestamp: isoTimestamp, data: withinJsonDepth(z.looseObject({})).optional() }),
    ]),
  ),
  eventId: z.string().min(1).optional(),
  metadata: dataObject.optional(),
  certificate: z.strictObject({ enabled: z.boolean().optional() }).optional(),
  level: z.string().min(1).optional(),
});

/** A body, its base64 document already decoded (request-body/json-body.ts). */
export interface SignBody {
  value: unknown;
  /** The document's bytes, when `document.base64` was standard base64. */
  content?: Buffer;
}

/**
 * The message for a body, or a VALIDATION_ERROR naming every problem of a
 * body the message cannot carry, as `contract` (the route's
 * {@link signRequestSchema}) names them. `callerKeyId` is the authenticated caller's.
 */
export function signMessageFromJson({ value, content }: SignBody, contract: ReturnType<typeof signRequestSchema>, callerKeyId: string): SignRequest {
  const wire = signRequestWireSchema.safeParse(value);
  if (!wire.success) {
    // only for a body refused anyway: the contract names all its problems, the values' too
    throw validationError(signRequestIssues(contract.safeParse(value).error ?? wire.error));
  }
  const body = wire.data;
  return {
    // both when both were sent: "exactly one" is the service's rule
    document: { ...(body.document.base64 === undefined ? {} : { content }), ...(body.document.url === undefined ? {} : { url: body.document.url }) },
    signer: { email: body.signer.email, name: body.signer.name, ip: body.signer.ip ?? "", userAgent: body.signer.userAgent ?? "" },
    auditTrail: body.auditTrail.map((event) => ({ type: auditEventTypeMessage(event.type), timestamp: new Date(event.timestamp), data: event.data })),
    eventId: body.eventId ?? "",
    metadata: body.metadata,
    certificate: body.certificate,
    callerKeyId,
    level: body.level ?? "",
  };
}
