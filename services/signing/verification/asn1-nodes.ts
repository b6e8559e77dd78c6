/**
 * Reading node-forge ASN.1 nodes of a signature under check. Unlike
 * cms/asn1.ts, which builds and reads our own DER, these accept whatever a
 * document carries and report an unexpected structure as a
 * {@link SignatureProblem}.
 */
import forge from "node-forge";
import type { Asn1 } from "../cms/asn1.js";
import { SignatureProblem } from "./signature-problem.js";

const { asn1 } = forge;
const { Class, Type } = asn1;

export function items(node: Asn1 | undefined): Asn1[] {
  if (!node || !Array.isArray(node.value)) throw new SignatureProblem("its CMS signature has an unexpected structure");
  return node.value;
}

export function oidOf(node: Asn1 | undefined): string {
  if (!node || node.type !== Type.OID || typeof node.value !== "string") {
    throw new SignatureProblem("its CMS signature has an unexpected structure");
  }
  return asn1.derToOid(node.value);
}

/** The bytes of an OCTET STRING (BER constructed ones included). */
export function octetBytes(node: Asn1): Buffer {
  if (typeof node.value === "string") return Buffer.from(node.value, "binary");
  return Buffer.concat(items(node).map(octetBytes));
}

/** Attributes (signed or unsigned) by type: each one's values. */
export function attributes(node: Asn1): Map<string, Asn1[]> {
  const map = new Map<string, Asn1[]>();
  for (const attribute of items(node)) {
    const [type, values] = items(attribute);
    map.set(oidOf(type), items(values));
  }
  return map;
}

/** The TBSCertificate fields of a DER certificate, from serialNumber on (the optional [0] version skipped). */
export function tbsFieldsFromSerial(der: Buffer): Asn1[] {
  const tbs = items(items(asn1.fromDer(der.toString("binary")))[0]);
  const offset = tbs[0]!.tagClass === Class.CONTEXT_SPECIFIC && tbs[0]!.type === 0 ? 1 : 0;
  return tbs.slice(offset);
}
