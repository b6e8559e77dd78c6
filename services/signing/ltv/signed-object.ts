/**
 * The signed structures of X.509 and OCSP (a certificate, a CRL, a basic
 * OCSP response): SEQUENCE { to-be-signed, AlgorithmIdentifier, BIT STRING,
 * ... }. The signature is checked over the to-be-signed part exactly as
 * received, never over a re-encoding of it.
 */
import { constants, createPublicKey, verify } from "node:crypto";
import forge from "node-forge";
import { HASH_NAMES, OID, SIGNATURE_ALGORITHMS, bitStringBytes, children, fromDerPrefix, oidValue, type Asn1 } from "../cms/asn1.js";
import { derChildren, firstDerElement } from "../cms/der-elements.js";

const { Class } = forge.asn1;

export interface SignedObject {
  /** The whole structure as encoded, without anything that followed it. */
  der: Buffer;
  /** Its components: the to-be-signed part, the algorithm, the signature, then any others. */
  fields: Asn1[];
  /** The encodings of the same components, as received. */
  encodings: Buffer[];
}

export function readSignedObject(bytes: Buffer, what: string): SignedObject {
  const der = firstDerElement(bytes, what);
  const fields = children(fromDerPrefix(der, what), what);
  if (fields.length < 3) throw new Error(`${what}: expected a signed structure`);
  return { der, fields, encodings: derChildren(der, what) };
}

/**
 * Whether the signature of `signed` verifies with the key of
 * `subjectPublicKeyInfo` (DER). Throws for an algorithm that is not
 * supported or does not fit the key.
 */
export function signatureVerifies(signed: SignedObject, subjectPublicKeyInfo: Buffer): boolean {
  const [, algorithm, signatureNode] = signed.fields;
  const [oidNode, parameters] = children(algorithm, "signature algorithm");
  const oid = oidValue(oidNode, "signature algorithm");
  const key = createPublicKey({ key: subjectPublicKeyInfo, format: "der", type: "spki" });
  const signature = bitStringBytes(signatureNode, "signature");
  const data = signed.encodings[0]!;
  if (oid === OID.rsassaPss) {
    if (key.asymmetricKeyType !== "rsa" && key.asymmetricKeyType !== "rsa-pss") throw new Error("an RSASSA-PSS signature needs an RSA key");
    const { hash, saltLength } = pssParameters(parameters);
    return verify(hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }, signature);
  }
  const expected = SIGNATURE_ALGORITHMS[oid];
  if (!expected) throw new Error(`the signature algorithm ${oid} is not supported`);
  if (key.asymmetricKeyType !== expected.key) throw new Error(`the signature algorithm ${oid} does not fit the ${key.asymmetricKeyType} key`);
  return verify(expected.hash, data, { key, dsaEncoding: "der" }, signature);
}

/** RSASSA-PSS-params (RFC 4055 3.1): hashAlgorithm [0] (default SHA-1) and saltLength [2] (default 20); MGF1 uses the same hash, as WebCrypto and OpenSSL assume. */
function pssParameters(parameters: Asn1 | undefined): { hash: string; saltLength: number } {
  let hash = "sha1";
  let saltLength = 20;
  for (const field of Array.isArray(parameters?.value) ? parameters.value : []) {
    if (field.tagClass !== Class.CONTEXT_SPECIFIC) continue;
    const [inner] = children(field, "RSASSA-PSS parameter");
    if (field.type === 0) {
      const name = HASH_NAMES[oidValue(children(inner, "RSASSA-PSS hashAlgorithm")[0], "RSASSA-PSS hashAlgorithm")];
      if (!name) throw new Error("the RSASSA-PSS hash algorithm is not supported");
      hash = name;
    } else if (field.type === 2) {
      saltLength = forge.asn1.derToInteger(String(inner?.value ?? ""));
    }
  }
  return { hash, saltLength };
}
