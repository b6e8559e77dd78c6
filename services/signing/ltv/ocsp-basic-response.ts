/** A BasicOCSPResponse (RFC 6960 4.2.1) as read, before anyone trusts it. */
import { children, isContextTag, primitiveBytes, timeValue, type Asn1 } from "../cms/asn1.js";
import { derChildren } from "../cms/der-elements.js";
import { readName, type Name } from "./distinguished-name.js";
import { readCertId, type CertId } from "./ocsp-cert-id.js";
import { readSignedObject, type SignedObject } from "./signed-object.js";

export interface BasicResponse {
  signed: SignedObject;
  responderId: { name: Name } | { keyHash: Buffer };
  responses: SingleResponse[];
  /** certs [0], as encoded. */
  certificates: Buffer[];
}

export interface SingleResponse {
  certId: CertId;
  /** good [0], revoked [1] { revocationTime, reason }, unknown [2]. */
  certStatus: Asn1;
  thisUpdate: Date;
  nextUpdate?: Date;
}

/** BasicOCSPResponse { tbsResponseData, signatureAlgorithm, signature, certs [0] EXPLICIT SEQUENCE OF Certificate OPTIONAL }. */
export function readBasicResponse(der: Buffer): BasicResponse {
  const signed = readSignedObject(der, "BasicOCSPResponse");
  const fields = children(signed.fields[0], "ResponseData");
  const encodings = derChildren(signed.encodings[0]!, "ResponseData");
  // version [0] EXPLICIT DEFAULT v1, then responderID, producedAt, responses
  const first = isContextTag(fields[0], 0) ? 1 : 0;
  const [responderId, , responses] = fields.slice(first);
  const certs = signed.encodings[3];
  return {
    signed,
    responderId: readResponderId(responderId, encodings[first]!),
    responses: children(responses, "responses").map(readSingleResponse),
    certificates: certs && isContextTag(signed.fields[3], 0) ? derChildren(derChildren(certs, "certs")[0]!, "certs") : [],
  };
}

/** ResponderID ::= CHOICE { byName [1] Name, byKey [2] KeyHash }. */
function readResponderId(node: Asn1 | undefined, der: Buffer): BasicResponse["responderId"] {
  if (isContextTag(node, 1)) return { name: readName(derChildren(der, "responderID")[0]!) };
  if (isContextTag(node, 2)) return { keyHash: primitiveBytes(children(node, "responderID")[0], "responderID") };
  throw new Error("the response's responderID is neither a name nor a key hash");
}

function readSingleResponse(node: Asn1): SingleResponse {
  const [certId, certStatus, thisUpdate, ...optional] = children(node, "SingleResponse");
  if (!certStatus) throw new Error("SingleResponse: no certStatus");
  const nextUpdate = optional.find((field) => isContextTag(field, 0));
  return {
    certId: readCertId(certId),
    certStatus,
    thisUpdate: timeValue(thisUpdate, "thisUpdate"),
    nextUpdate: nextUpdate ? timeValue(children(nextUpdate, "nextUpdate")[0], "nextUpdate") : undefined,
  };
}
