/**
 * Who a signer certificate names: its subject common name and e-mail address
 * (subject emailAddress, else the first SAN rfc822Name).
 */
import type { X509Certificate } from "node:crypto";
import { OID } from "../cms/asn1.js";
import { directoryString } from "../cms/directory-string.js";
import { items, oidOf, tbsFieldsFromSerial } from "./asn1-nodes.js";

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
        if (oid === OID.commonName && !commonName) commonName = directoryString(value!) ?? "";
        if (oid === OID.emailAddress && !email) email = directoryString(value!) ?? "";
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

