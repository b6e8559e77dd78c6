/**
 * X.501 Names as revocation checking compares them: a certificate's issuer
 * with the subject of its issuer, a CRL's issuer, an OCSP responderID.
 * Compared as pkijs (which LTV used before) compared them, so that chains
 * and responders match as they did: attribute by attribute in order (RDN
 * boundaries aside), character strings of any type alike after trimming,
 * collapsing runs of spaces and ignoring case (RFC 5280 7.1 in spirit),
 * other values by their encoding.
 */
import { OID, children, fromDerPrefix, oidValue, toDer, type Asn1 } from "../cms/asn1.js";
import { directoryString } from "../cms/directory-string.js";

export interface Name {
  /** The Name as encoded, which an OCSP CertID's issuerNameHash covers. */
  der: Buffer;
  /** Every AttributeTypeAndValue, RDN after RDN. */
  attributes: { type: string; value: Asn1 }[];
}

/** `der`: exactly the Name's encoding. */
export function readName(der: Buffer): Name {
  const attributes = children(fromDerPrefix(der, "Name"), "Name").flatMap((rdn) =>
    children(rdn, "RelativeDistinguishedName").map((attribute) => {
      const [type, value] = children(attribute, "AttributeTypeAndValue");
      if (!value) throw new Error("AttributeTypeAndValue: no value");
      return { type: oidValue(type, "AttributeTypeAndValue"), value };
    }),
  );
  return { der, attributes };
}

export function sameName(a: Name, b: Name): boolean {
  return a.attributes.length === b.attributes.length && a.attributes.every((attribute, index) => sameAttribute(attribute, b.attributes[index]!));
}

function sameAttribute(a: Name["attributes"][number], b: Name["attributes"][number]): boolean {
  if (a.type !== b.type) return false;
  const [textA, textB] = [directoryString(a.value), directoryString(b.value)];
  if (textA === undefined || textB === undefined) return textA === textB && toDer(a.value).equals(toDer(b.value));
  return prepared(textA).localeCompare(prepared(textB)) === 0;
}

function prepared(value: string): string {
  return value.trim().replace(/ +/g, " ").toLowerCase();
}

const SHORT_NAMES: Record<string, string> = {
  [OID.commonName]: "CN",
  [OID.organizationName]: "O",
  [OID.organizationalUnitName]: "OU",
  [OID.countryName]: "C",
};

/** "CN=…, O=…" in the certificate's order, for messages. */
export function nameText(name: Name): string {
  return name.attributes.map(({ type, value }) => `${SHORT_NAMES[type] ?? type}=${directoryString(value) ?? ""}`).join(", ");
}

/** The first common name, if any. */
export function commonNameOf(name: Name): string | undefined {
  const attribute = name.attributes.find(({ type }) => type === OID.commonName);
  return attribute && directoryString(attribute.value);
}
