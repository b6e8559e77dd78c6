/**
 * Where a certificate says its issuer's certificate and its revocation status
 * are: the authority information access extension (caIssuers, OCSP; RFC 5280
 * 4.2.2.1) and the CRL distribution points (4.2.1.13). Only http(s) URIs are
 * used; an extension that cannot be read names none.
 */
import { OID, children, fromDerPrefix, isContextTag, oidValue, type Asn1 } from "../cms/asn1.js";
import { safe } from "../verification/safe.js";
import { extensionValue, type Certificate } from "./certificate.js";

/** GeneralName uniformResourceIdentifier: [6] IMPLICIT IA5String. */
const URI_TAG = 6;

/** The URLs of one access method (OID.ocsp, OID.caIssuers). */
export function accessLocations(certificate: Certificate, method: string): string[] {
  return fromExtension(certificate, OID.authorityInfoAccess, (extension) =>
    children(extension, "AuthorityInfoAccess").flatMap((description) => {
      const [accessMethod, location] = children(description, "AccessDescription");
      return oidValue(accessMethod, "accessMethod") === method ? uris([location]) : [];
    }),
  );
}

/** The fullName URIs of every distribution point. */
export function crlDistributionPoints(certificate: Certificate): string[] {
  return fromExtension(certificate, OID.cRLDistributionPoints, (extension) =>
    children(extension, "CRLDistributionPoints").flatMap((point) => {
      // distributionPoint [0] { fullName [0] GeneralNames | nameRelativeToCRLIssuer [1] }
      const name = children(point, "DistributionPoint").find((field) => isContextTag(field, 0));
      const fullName = name && children(name, "distributionPoint").find((choice) => isContextTag(choice, 0));
      return fullName ? uris(children(fullName, "fullName")) : [];
    }),
  );
}

function fromExtension(certificate: Certificate, oid: string, read: (extension: Asn1) => string[]): string[] {
  const value = extensionValue(certificate, oid);
  return value ? safe(() => read(fromDerPrefix(value, oid)), []).filter(isHttp) : [];
}

function uris(names: (Asn1 | undefined)[]): string[] {
  return names.flatMap((name) => (isContextTag(name, URI_TAG) && typeof name.value === "string" ? [name.value] : []));
}

const isHttp = (url: string) => /^https?:\/\//i.test(url);
