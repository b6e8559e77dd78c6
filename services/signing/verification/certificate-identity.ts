/**
 * Who a signer certificate names: its subject common name and e-mail address
 * (subject emailAddress, else the first SAN rfc822Name).
 */
import type { X509Certificate } from "node:crypto";
import forge from "node-forge";
import { OID, type Asn1 } from "../cms/asn1.js";
import { items, oidOf, tbsFieldsFromSerial } from "./asn1-nodes.js";

const { Type } = forge.asn1;

/** PKCS#9 emailAddress, the subject attribute older certificates carry the address in. */
export function subjectIdentity(certificate: X509Certificate): { commonName: string; email: string } {
  let commonName = "";
  let email = "";
  try {
    // TBSCertificate from serialNumber: serial, signature, issuer, validity, subject
    for (const rdn of items(tbsFieldsFromSerial(Buffer.from(certificate.raw))[4])) {
      for (const atv of items(rdn)) {
        const [type, value] = items(atv);
        const oid = oidOf(type);
        if (oid === OID.commonName && !commonName) commonName = directoryString(value!);
        if (oid === OID.emailAddress && !email) email = directoryString(value!);
      }
    }
  } catch {
    // leave them empty
  }
  if (!email) {
    const san = certificate.subjectAltName ?? "";
    email = /(?:^|,\s*)email:([^,]+)/.exec(san)?.[1]?.trim() ?? "";
  }
  return { commonName, email };
}

function directoryString(node: Asn1): string {
  const bytes = Buffer.from(typeof node.value === "string" ? node.value : "", "binary");
  if (node.type === Type.UTF8) return bytes.toString("utf8");
  if (node.type === Type.BMPSTRING) return Buffer.from(bytes).swap16().toString("utf16le");
  return bytes.toString("latin1");
}
