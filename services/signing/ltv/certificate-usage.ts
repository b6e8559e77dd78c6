/**
 * What a certificate's key may do, for accepting an OCSP responder: basic
 * constraints, key usage and extended key usage (RFC 5280 4.2.1.9, 4.2.1.3,
 * 4.2.1.12). An extension that cannot be read grants nothing.
 */
import forge from "node-forge";
import { OID, bitStringBytes, children, fromDerPrefix, oidValue } from "../cms/asn1.js";
import { safe } from "../verification/safe.js";
import { extensionValue, type Certificate } from "./certificate.js";

const { Type } = forge.asn1;

const DIGITAL_SIGNATURE = 0x80;
const KEY_CERT_SIGN = 0x04;

/** basicConstraints cA, and keyCertSign when key usage is present (and only then). */
export function isCaCertificate(certificate: Certificate): boolean {
  const constraints = extensionValue(certificate, OID.basicConstraints);
  const ca = constraints !== undefined && safe(() => {
    const [flag] = children(fromDerPrefix(constraints, "basicConstraints"), "basicConstraints");
    return flag?.type === Type.BOOLEAN && flag.value !== "\x00";
  }, false);
  const usage = keyUsage(certificate);
  return ca && (usage === undefined || (usage & KEY_CERT_SIGN) !== 0);
}

/** Without a key usage extension, any use is permitted. */
export function mayCreateSignatures(certificate: Certificate): boolean {
  const usage = keyUsage(certificate);
  return usage === undefined || (usage & DIGITAL_SIGNATURE) !== 0;
}

export function hasExtendedKeyUsage(certificate: Certificate, purpose: string): boolean {
  const value = extensionValue(certificate, OID.extKeyUsage);
  return value !== undefined && safe(() => children(fromDerPrefix(value, "extKeyUsage"), "extKeyUsage").some((node) => oidValue(node, "keyPurpose") === purpose), false);
}

/** The first byte of the key usage bits (digitalSignature … cRLSign but decipherOnly); 0 when unreadable; undefined without the extension. */
function keyUsage(certificate: Certificate): number | undefined {
  const value = extensionValue(certificate, OID.keyUsage);
  return value === undefined ? undefined : safe(() => bitStringBytes(fromDerPrefix(value, "keyUsage"), "keyUsage")[0] ?? 0, 0);
}
