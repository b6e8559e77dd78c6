/**
 * Verifies the signatures of a PDF (for `POST /v1/verify`): every signature
 * dictionary's /ByteRange and /Contents, the CMS SignedData in /Contents
 * (messageDigest, signature over the signed attributes, signer certificate),
 * whether the last signature covers the whole file, and optionally whether the
 * signer certificates chain up to given trusted roots.
 *
 * Signatures are found by scanning the raw bytes for `/ByteRange [a b c d]`
 * (which also finds signatures of earlier revisions that a later incremental
 * update replaced) together with pdf-lib's parsed objects (which also sees
 * dictionaries inside object streams); metadata (/M, /Name, /SubFilter) comes
 * from pdf-lib's parse when it has the dictionary, else from the raw bytes.
 *
 * The CMS is read with node-forge's ASN.1 (it cannot parse EC keys, so
 * certificates and public keys are node:crypto's X509Certificate).
 */
import { X509Certificate, createHash, verify as cryptoVerify } from "node:crypto";
import forge from "node-forge";
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFStream, PDFString, type PDFObject } from "pdf-lib";
import { ServiceError } from "../../core/errors.js";
import { isPdf } from "../../core/file-signature.js";
import { OID, toDer, type Asn1 } from "../cms/asn1.js";
import type { RevocationSource } from "../ltv/revocation.js";
import { assessSignature, type DocumentValidationData, type SignatureAssessment } from "../ltv/signature-assessment.js";
import type { PdfFile } from "./pdf-file.js";
import { openReadablePdf, unreadablePdf } from "./readable-pdf.js";
import { changesAfter } from "./revisions.js";

const { asn1 } = forge;
const { Class, Type } = asn1;

export interface PdfVerifyOptions {
  /** DER certificates of trusted roots; when given, every signer must chain up to one of them. */
  trustedRootsDer?: Buffer[];
  /** Where revocation data the document lacks is fetched (as EU DSS does online); unset: not fetched. */
  revocation?: Pick<RevocationSource, "statusOf">;
}

export interface PdfSignerVerification {
  name: string;
  email: string;
  /** ISO 8601, from the signature dictionary's /M ("" when absent or unreadable). */
  signedAt: string;
  /** Hex SHA-256 of the signing certificate's DER ("" when it was not found). */
  certificateFingerprint: string;
  subFilter: string;
  coversWholeDocument: boolean;
  timestamped: boolean;
  /** The signature matches the bytes its /ByteRange covers and the signer certificate's key. */
  intact: boolean;
  /** The first problem found, if any ("not trusted" when the chain check failed). */
  problem?: string;
  /** A document timestamp (SubFilter ETSI.RFC3161) rather than a signature. */
  kind: "signature" | "document-timestamp";
  /** The revision (1 = the original document) whose last byte the signature covers. */
  revision: number;
  /** Every revision after that one makes only permitted changes (signatures, form, DSS, document timestamps). */
  laterChangesPermitted: boolean;
}

export type PdfSignatureReport = PdfSignerVerification & Omit<SignatureAssessment, never>;

export interface PdfVerification {
  valid: boolean;
  reason: string;
  signers: PdfSignatureReport[];
  document: { sha256: string; pages: number };
}

const OID_TST_INFO = "1.2.840.113549.1.9.16.1.4";
const OID_SIGNATURE_TIMESTAMP_TOKEN = "1.2.840.113549.1.9.16.2.14";
const OID_EMAIL_ADDRESS = "1.2.840.113549.1.9.1";
const EMAIL_LIKE = /^[^\s@]+@[^\s@]+$/;
const OID_RSASSA_PSS = "1.2.840.113549.1.1.10";

const HASHES: Record<string, string> = {
  [OID.sha256]: "sha256",
  "2.16.840.1.101.3.4.2.2": "sha384",
  "2.16.840.1.101.3.4.2.3": "sha512",
  "1.3.14.3.2.26": "sha1",
};

/** Signature algorithms whose hash is implied; others (rsaEncryption, ecPublicKey) use the digestAlgorithm. */
const SIGNATURE_HASHES: Record<string, string> = {
  [OID.sha256WithRSAEncryption]: "sha256",
  "1.2.840.113549.1.1.12": "sha384",
  "1.2.840.113549.1.1.13": "sha512",
  [OID.ecdsaWithSHA256]: "sha256",
  "1.2.840.10045.4.3.3": "sha384",
  "1.2.840.10045.4.3.4": "sha512",
};

/** What is known about one signature dictionary before its CMS is checked. */
interface SignatureEntry {
  byteRange: number[];
  /** Offset of the /ByteRange key in the raw bytes (-1 when only pdf-lib saw it). */
  rawOffset: number;
  name: string;
  /** /ContactInfo: where our signatures record the signer's e-mail address. */
  contactInfo: string;
  subFilter: string;
  signedAt: string;
}

/**
 * Verifies every signature of `pdf`. A PDF without signatures is not valid
 * (reason "The document has no signature."). Throws {@link ServiceError}
 * UNPROCESSABLE_DOCUMENT for bytes that are not a readable PDF (as signing
 * reads it: {@link openReadablePdf}) or are encrypted.
 */
export async function verifyPdfSignatures(pdf: Buffer, options: PdfVerifyOptions = {}): Promise<PdfVerification> {
  const { file, document, pages } = await loadDocument(pdf);
  const sha256 = createHash("sha256").update(pdf).digest("hex");
  const summary = { sha256, pages };
  const roots = readRoots(options.trustedRootsDer);

  const entries = findSignatures(pdf, document);
  if (entries.length === 0) {
    return { valid: false, reason: "The document has no signature.", signers: [], document: summary };
  }

  const dss = safe(() => documentValidationData(file), undefined) ?? { certificates: [], ocspResponses: [], crls: [] };
  // the DSS may hold intermediates a signature does not carry
  const dssCertificates = dss.certificates.flatMap((der) => safe(() => [new X509Certificate(der)], []));
  const checked = entries.map((entry) => verifyEntry(pdf, entry, roots, dssCertificates));
  const signers: PdfSignatureReport[] = [];
  for (const [index, { report, contents, signerDer, hashFailure }] of checked.entries()) {
    const entry = entries[index]!;
    const changes = safe(() => changesAfter(file, end(entry.byteRange)), { permitted: false, problem: "the revisions after it cannot be read" });
    report.revision = revisionOf(pdf, end(entry.byteRange));
    report.laterChangesPermitted = changes.permitted;
    if (!changes.permitted && !report.problem) report.problem = `a later revision changed the document in a way that is not permitted: ${changes.problem}`;
    const laterDocumentTimestamp = checked.some(
      (other, otherIndex) => other.report.kind === "document-timestamp" && other.report.intact && end(entries[otherIndex]!.byteRange) > end(entry.byteRange),
    );
    const assessment = contents
      ? await assessSignature(
          {
            kind: report.kind,
            cmsDer: contents,
            signerDer,
            intact: report.intact,
            hashFailure,
            trusted: roots === undefined ? undefined : report.intact && report.problem !== "not trusted",
            laterChangesPermitted: changes.permitted,
            laterDocumentTimestamp,
          },
          dss,
          options.trustedRootsDer ?? [],
          options.revocation,
        ).catch((error: unknown) => unreadableAssessment(error))
      : unreadableAssessment(new Error(report.problem ?? "unreadable"));
    signers.push({ ...report, ...assessment });
  }
  return { ...judge(signers), signers, document: summary };
}

function unreadableAssessment(error: unknown): SignatureAssessment {
  return {
    level: "",
    indication: "TOTAL-FAILED",
    subIndication: "FORMAT_FAILURE",
    timestampTime: "",
    timestampAuthority: "",
    revocation: `not checked (${(error as Error).message})`,
  };
}

/** 1 + the number of "%%EOF" markers before `offset` that end earlier revisions. */
function revisionOf(pdf: Buffer, offset: number): number {
  let revision = 1;
  for (let at = pdf.indexOf("%%EOF"); at >= 0 && at + 5 < offset - 2; at = pdf.indexOf("%%EOF", at + 5)) revision++;
  return revision;
}

/** The document security store's certificates, OCSP responses and CRLs. */
function documentValidationData(file: PdfFile): DocumentValidationData {
  const dss = file.resolveDict(file.catalog().get(PDFName.of("DSS")));
  const streams = (key: string) =>
    (file.resolveArray(dss?.get(PDFName.of(key)))?.asArray() ?? []).flatMap((item) => {
      const data = safe(() => file.streamData(item), undefined);
      return data ? [data] : [];
    });
  return { certificates: streams("Certs"), ocspResponses: streams("OCSPs"), crls: streams("CRLs") };
}

/**
 * The document as both readers see it: the lazy reader signing uses (which
 * refuses a file with no trailer /Root, where pdf-lib would guess a catalog,
 * and an encrypted one) and pdf-lib's full parse.
 */
async function loadDocument(pdf: Buffer): Promise<{ file: PdfFile; document: PDFDocument; pages: number }> {
  if (!isPdf(pdf)) {
    throw new ServiceError("UNPROCESSABLE_DOCUMENT", "The document is not a PDF.");
  }
  const file = openReadablePdf(pdf, "verifying");
  try {
    const document = await PDFDocument.load(pdf, { ignoreEncryption: true, updateMetadata: false });
    // a file without a page tree fails here (pdf-lib loads almost anything)
    return { file, document, pages: document.getPageCount() };
  } catch (error) {
    throw unreadablePdf(error);
  }
}

function readRoots(ders: Buffer[] | undefined): X509Certificate[] | undefined {
  if (ders === undefined) return undefined;
  return ders.map((der, index) => {
    try {
      return new X509Certificate(der);
    } catch (error) {
      throw new ServiceError("VALIDATION_ERROR", `Trusted root ${index + 1} is not a DER X.509 certificate.`, {
        cause: error,
      });
    }
  });
}

// ---------------------------------------------------------------------------
// finding the signature dictionaries

const BYTE_RANGE = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g;

function findSignatures(pdf: Buffer, document: PDFDocument): SignatureEntry[] {
  const text = pdf.toString("latin1");
  const parsed = parsedSignatureDictionaries(document);
  const byKey = new Map<string, SignatureEntry>();

  for (const match of text.matchAll(BYTE_RANGE)) {
    const byteRange = match.slice(1, 5).map(Number);
    const key = byteRange.join(" ");
    if (byKey.has(key)) continue;
    const dictionary = parsed.get(key);
    byKey.set(key, dictionary ? { ...entryFromDictionary(byteRange, dictionary), rawOffset: match.index } : rawEntry(text, byteRange, match.index));
  }
  for (const [key, dictionary] of parsed) {
    if (!byKey.has(key)) byKey.set(key, entryFromDictionary(key.split(" ").map(Number), dictionary));
  }
  // in revision order: the signature whose range ends last is the last one
  return [...byKey.values()].sort((x, y) => end(x.byteRange) - end(y.byteRange));
}

function end(byteRange: number[]): number {
  return (byteRange[2] ?? 0) + (byteRange[3] ?? 0);
}

/** Dictionaries with a numeric 4-item /ByteRange among pdf-lib's objects, by "a b c d". */
function parsedSignatureDictionaries(document: PDFDocument): Map<string, PDFDict> {
  const found = new Map<string, PDFDict>();
  const byteRangeName = PDFName.of("ByteRange");
  const visit = (object: PDFObject, depth: number): void => {
    if (depth > 32) return;
    if (object instanceof PDFDict) {
      const range = object.get(byteRangeName);
      if (range instanceof PDFArray && range.size() === 4) {
        const numbers = range.asArray().map((item) => (item instanceof PDFNumber ? item.asNumber() : NaN));
        if (numbers.every((n) => Number.isInteger(n) && n >= 0)) found.set(numbers.join(" "), object);
      }
      for (const child of object.values()) visit(child, depth + 1);
    } else if (object instanceof PDFArray) {
      for (const child of object.asArray()) visit(child, depth + 1);
    }
  };
  for (const [, object] of document.context.enumerateIndirectObjects()) {
    visit(object instanceof PDFStream ? object.dict : object, 0);
  }
  return found;
}

function entryFromDictionary(byteRange: number[], dictionary: PDFDict): SignatureEntry {
  const subFilter = dictionary.get(PDFName.of("SubFilter"));
  const text = (key: string) => {
    const value = dictionary.get(PDFName.of(key));
    return value instanceof PDFString || value instanceof PDFHexString ? safe(() => value.decodeText(), "") : "";
  };
  return {
    byteRange,
    rawOffset: -1,
    subFilter: subFilter instanceof PDFName ? subFilter.decodeText() : "",
    name: text("Name"),
    contactInfo: text("ContactInfo"),
    signedAt: pdfDateToIso(text("M")),
  };
}

/** Metadata read from the raw bytes around the /ByteRange (the dictionary pdf-lib no longer sees, e.g. of an earlier revision). */
function rawEntry(text: string, byteRange: number[], offset: number): SignatureEntry {
  const startObj = Math.max(0, text.lastIndexOf("obj", offset));
  let endObj = text.indexOf("endobj", offset);
  if (endObj < 0) endObj = text.length;
  // skip the /Contents hex string, which can be long and holds nothing of interest
  const region = text.slice(startObj, endObj).replace(/\/Contents\s*<[0-9a-fA-F\s]*>/, "");
  const subFilter = /\/SubFilter\s*\/([^\s/<>[\]()]+)/.exec(region)?.[1] ?? "";
  return {
    byteRange,
    rawOffset: offset,
    subFilter: decodeName(subFilter),
    name: rawTextString(region, "Name"),
    contactInfo: rawTextString(region, "ContactInfo"),
    signedAt: pdfDateToIso(rawTextString(region, "M")),
  };
}

function rawTextString(region: string, key: string): string {
  const match = new RegExp(`/${key}\\s*([(<])`).exec(region);
  if (!match) return "";
  const start = match.index + match[0].length - 1;
  let bytes: Buffer;
  if (match[1] === "<") {
    const close = region.indexOf(">", start);
    if (close < 0) return "";
    const hex = region.slice(start + 1, close).replace(/\s/g, "");
    bytes = Buffer.from(hex.length % 2 ? `${hex}0` : hex, "hex");
  } else {
    bytes = literalStringBytes(region, start);
  }
  return decodePdfText(bytes);
}

/** The bytes of the literal string `( ... )` starting at `start` (balanced parentheses, escapes). */
function literalStringBytes(text: string, start: number): Buffer {
  const out: number[] = [];
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      const next = text[++i] ?? "";
      const escapes: Record<string, number> = { n: 10, r: 13, t: 9, b: 8, f: 12, "(": 40, ")": 41, "\\": 92 };
      if (next in escapes) out.push(escapes[next]!);
      else if (/[0-7]/.test(next)) {
        const octal = /^[0-7]{1,3}/.exec(text.slice(i, i + 3))![0];
        out.push(parseInt(octal, 8) & 0xff);
        i += octal.length - 1;
      } else if (next === "\r") {
        if (text[i + 1] === "\n") i++;
      } else if (next !== "\n") out.push(next.charCodeAt(0));
      continue;
    }
    if (c === "(") {
      if (depth++ === 0) continue;
    } else if (c === ")") {
      if (--depth === 0) break;
    }
    out.push(c.charCodeAt(0) & 0xff);
  }
  return Buffer.from(out);
}

function decodePdfText(bytes: Buffer): string {
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    const body = bytes.subarray(2, 2 + ((bytes.length - 2) & ~1));
    return Buffer.from(body).swap16().toString("utf16le");
  }
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return bytes.subarray(3).toString("utf8");
  return bytes.toString("latin1"); // PDFDocEncoding, close enough for names
}

function decodeName(name: string): string {
  return name.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** "D:YYYYMMDDHHmmSSOHH'mm'" to ISO 8601 UTC; "" when unreadable. */
function pdfDateToIso(value: string): string {
  const match = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+-])(?:(\d{2})'?(\d{2})?'?)?)?/.exec(value.trim());
  if (!match) return "";
  const [, year, month = "01", day = "01", hour = "00", minute = "00", second = "00", sign, offsetHours = "00", offsetMinutes = "00"] = match;
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  const offset = (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  const time = sign === "+" ? utc - offset : sign === "-" ? utc + offset : utc;
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

// ---------------------------------------------------------------------------
// checking one signature

class SignatureProblem extends Error {}

interface CheckedSignature {
  report: PdfSignerVerification;
  /** The CMS in /Contents, when it could be read. */
  contents?: Buffer;
  signerDer?: Buffer;
  /** The covered bytes no longer match the signed digest. */
  hashFailure: boolean;
}

function verifyEntry(pdf: Buffer, entry: SignatureEntry, roots: X509Certificate[] | undefined, moreCertificates: X509Certificate[]): CheckedSignature {
  const checked: CheckedSignature = { report: undefined as unknown as PdfSignerVerification, hashFailure: false };
  const result: PdfSignerVerification = {
    name: entry.name,
    email: "",
    signedAt: entry.signedAt,
    certificateFingerprint: "",
    subFilter: entry.subFilter,
    coversWholeDocument: end(entry.byteRange) === pdf.length,
    timestamped: false,
    intact: false,
    kind: entry.subFilter === "ETSI.RFC3161" ? "document-timestamp" : "signature",
    revision: 0,
    laterChangesPermitted: true,
  };
  checked.report = result;
  try {
    const { contents, signedBytes } = checkByteRange(pdf, entry);
    const cms = readCms(contents);
    checked.contents = contents.subarray(0, derLength(contents));
    const signer = findSignerCertificate(cms);
    checked.signerDer = Buffer.from(signer.certificate.raw);
    result.certificateFingerprint = createHash("sha256").update(signer.certificate.raw).digest("hex");
    const identity = subjectIdentity(signer.certificate);
    if (!result.name) result.name = identity.commonName;
    result.email = identity.email || (EMAIL_LIKE.test(entry.contactInfo) ? entry.contactInfo : "");
    result.timestamped = cms.unsignedAttributes.has(OID_SIGNATURE_TIMESTAMP_TOKEN) || cms.eContentType === OID_TST_INFO;
    try {
      checkDigest(cms, signedBytes);
    } catch (error) {
      checked.hashFailure = true;
      throw error;
    }
    if (!signer.verified) checkSignature(cms, signer.certificate);
    checkSigningCertificateAttribute(cms, signer.certificate);
    result.intact = true;
    if (roots !== undefined && !chainsToRoot(signer.certificate, [...cms.certificates, ...moreCertificates], roots)) {
      result.problem = "not trusted";
    }
  } catch (error) {
    result.problem =
      error instanceof SignatureProblem ? error.message : `the signature cannot be read (${(error as Error).message})`;
  }
  return checked;
}

/** Checks the /ByteRange is sane and returns the /Contents bytes and the covered bytes. */
function checkByteRange(pdf: Buffer, entry: SignatureEntry): { contents: Buffer; signedBytes: Buffer } {
  const [a, b, c, d] = entry.byteRange as [number, number, number, number];
  if (a !== 0) throw new SignatureProblem("its /ByteRange does not start at the beginning of the file");
  if (b <= 0 || c <= b || d < 0 || c + d > pdf.length) {
    throw new SignatureProblem("its /ByteRange lies outside the file or is malformed");
  }
  const gap = pdf.subarray(b, c).toString("latin1");
  if (!/^<[0-9a-fA-F]*>$/.test(gap) || gap.length % 2 !== 0) {
    throw new SignatureProblem("the bytes its /ByteRange leaves out are not exactly the /Contents hex string");
  }
  // the hole must be the value of a /Contents key...
  const before = pdf.subarray(Math.max(0, b - 64), b).toString("latin1");
  if (!/\/Contents\s*$/.test(before)) {
    throw new SignatureProblem("the bytes its /ByteRange leaves out are not the /Contents of a signature dictionary");
  }
  // ...of the same object as the /ByteRange
  if (entry.rawOffset >= 0) {
    const between = entry.rawOffset < b ? pdf.subarray(entry.rawOffset, b) : pdf.subarray(c, entry.rawOffset);
    if (between.includes("endobj") || between.includes("/ByteRange", 1)) {
      throw new SignatureProblem("its /Contents and /ByteRange are not in the same signature dictionary");
    }
  }
  return {
    contents: Buffer.from(gap.slice(1, -1), "hex"),
    signedBytes: Buffer.concat([pdf.subarray(a, a + b), pdf.subarray(c, c + d)]),
  };
}

interface ParsedCms {
  certificates: X509Certificate[];
  /** SignerInfo.sid: issuer + serial DERs, or a subject key identifier. */
  sid: { issuer: Buffer; serial: Buffer } | { subjectKeyIdentifier: Buffer };
  digestAlgorithm: string;
  signatureAlgorithm: string;
  signature: Buffer;
  /** DER of the signed attributes re-tagged as SET, the bytes the signature covers (undefined: none). */
  signedAttributesDer: Buffer | undefined;
  signedAttributes: Map<string, Asn1[]>;
  unsignedAttributes: Map<string, Asn1[]>;
  eContentType: string;
  /** The encapsulated content (a timestamp token's TSTInfo), when present. */
  eContent: Buffer | undefined;
}

function readCms(contents: Buffer): ParsedCms {
  const der = contents.subarray(0, derLength(contents));
  let root: Asn1;
  try {
    root = asn1.fromDer(der.toString("binary"), { strict: false, parseAllBytes: true, decodeBitStrings: false } as unknown as boolean);
  } catch (error) {
    throw new SignatureProblem(`its /Contents is not a readable CMS signature (${(error as Error).message})`);
  }
  const [contentType, explicit] = items(root);
  if (oidOf(contentType) !== OID.signedData) throw new SignatureProblem("its /Contents is not a CMS SignedData");
  const signedData = items(items(explicit)[0]);
  let index = 1; // after version
  index++; // digestAlgorithms
  const encap = items(signedData[index++]);
  const eContentType = oidOf(encap[0]);
  let eContent: Buffer | undefined;
  if (encap[1]) {
    const octets = items(encap[1])[0];
    eContent = octets ? octetBytes(octets) : undefined;
  }
  const certificates: X509Certificate[] = [];
  for (; index < signedData.length - 1; index++) {
    const node = signedData[index]!;
    if (node.tagClass === Class.CONTEXT_SPECIFIC && node.type === 0) {
      for (const item of items(node)) {
        if (item.tagClass !== Class.UNIVERSAL || item.type !== Type.SEQUENCE) continue; // other certificate formats
        try {
          certificates.push(new X509Certificate(toDer(item)));
        } catch {
          // an unreadable certificate cannot be the signer's
        }
      }
    }
  }
  const signerInfos = items(signedData[signedData.length - 1]);
  if (signerInfos.length !== 1) throw new SignatureProblem(`its CMS holds ${signerInfos.length} signer infos instead of one`);
  const info = items(signerInfos[0]);
  const sidNode = info[1]!;
  const sid =
    sidNode.tagClass === Class.CONTEXT_SPECIFIC
      ? { subjectKeyIdentifier: Buffer.from(String(sidNode.value ?? ""), "binary") }
      : { issuer: toDer(items(sidNode)[0]!), serial: toDer(items(sidNode)[1]!) };
  const digestAlgorithm = oidOf(items(info[2])[0]);
  let position = 3;
  let signedAttributesDer: Buffer | undefined;
  let signedAttributes = new Map<string, Asn1[]>();
  const maybeSigned = info[position]!;
  if (maybeSigned.tagClass === Class.CONTEXT_SPECIFIC && maybeSigned.type === 0) {
    signedAttributes = attributes(maybeSigned);
    signedAttributesDer = toDer(asn1.create(Class.UNIVERSAL, Type.SET, true, items(maybeSigned)));
    position++;
  }
  const signatureAlgorithm = oidOf(items(info[position++])[0]);
  const signature = octetBytes(info[position++]!);
  const maybeUnsigned = info[position];
  const unsignedAttributes =
    maybeUnsigned && maybeUnsigned.tagClass === Class.CONTEXT_SPECIFIC && maybeUnsigned.type === 1
      ? attributes(maybeUnsigned)
      : new Map<string, Asn1[]>();
  return {
    certificates,
    sid,
    digestAlgorithm,
    signatureAlgorithm,
    signature,
    signedAttributesDer,
    signedAttributes,
    unsignedAttributes,
    eContentType,
    eContent,
  };
}

/** Length of the DER element at the start of `der` (the rest of /Contents is zero padding). */
function derLength(der: Buffer): number {
  if (der.length < 2 || der[0] !== 0x30) throw new SignatureProblem("its /Contents does not hold a CMS signature");
  const first = der[1]!;
  if (first < 0x80) return 2 + first;
  const count = first & 0x7f;
  if (count === 0 || count > 4 || der.length < 2 + count) throw new SignatureProblem("its /Contents holds a malformed CMS signature");
  const total = 2 + count + der.subarray(2, 2 + count).readUIntBE(0, count);
  if (total > der.length) throw new SignatureProblem("its /Contents holds a truncated CMS signature");
  return total;
}

function items(node: Asn1 | undefined): Asn1[] {
  if (!node || !Array.isArray(node.value)) throw new SignatureProblem("its CMS signature has an unexpected structure");
  return node.value;
}

function oidOf(node: Asn1 | undefined): string {
  if (!node || node.type !== Type.OID || typeof node.value !== "string") {
    throw new SignatureProblem("its CMS signature has an unexpected structure");
  }
  return asn1.derToOid(node.value);
}

/** The bytes of an OCTET STRING (BER constructed ones included). */
function octetBytes(node: Asn1): Buffer {
  if (typeof node.value === "string") return Buffer.from(node.value, "binary");
  return Buffer.concat(items(node).map(octetBytes));
}

function attributes(node: Asn1): Map<string, Asn1[]> {
  const map = new Map<string, Asn1[]>();
  for (const attribute of items(node)) {
    const [type, values] = items(attribute);
    map.set(oidOf(type), items(values));
  }
  return map;
}

function findSignerCertificate(cms: ParsedCms): { certificate: X509Certificate; verified: boolean } {
  if ("issuer" in cms.sid) {
    const { issuer, serial } = cms.sid;
    for (const certificate of cms.certificates) {
      const parts = safe(() => issuerAndSerial(Buffer.from(certificate.raw)), undefined);
      if (parts && parts.issuer.equals(issuer) && parts.serial.equals(serial)) return { certificate, verified: false };
    }
  } else {
    // subjectKeyIdentifier: the certificate whose key verifies the signature
    for (const certificate of cms.certificates) {
      if (safe(() => (checkSignature(cms, certificate), true), false)) return { certificate, verified: true };
    }
  }
  throw new SignatureProblem("its CMS does not include the signer's certificate");
}

function issuerAndSerial(der: Buffer): { issuer: Buffer; serial: Buffer } {
  const tbs = items(items(asn1.fromDer(der.toString("binary")))[0]);
  const offset = tbs[0]!.tagClass === Class.CONTEXT_SPECIFIC && tbs[0]!.type === 0 ? 1 : 0;
  return { serial: toDer(tbs[offset]!), issuer: toDer(tbs[offset + 2]!) };
}

function hashName(oid: string): string {
  const name = HASHES[oid];
  if (!name) throw new SignatureProblem(`its digest algorithm ${oid} is not supported`);
  return name;
}

function checkDigest(cms: ParsedCms, signedBytes: Buffer): void {
  const hash = hashName(cms.digestAlgorithm);
  if (cms.eContentType === OID_TST_INFO && cms.eContent) {
    // a document timestamp (ETSI.RFC3161): the TSTInfo's messageImprint is the document hash
    const imprint = items(items(asn1.fromDer(cms.eContent.toString("binary")))[2]);
    const imprintHash = hashName(oidOf(items(imprint[0])[0]));
    const hashed = octetBytes(imprint[1]!);
    if (!createHash(imprintHash).update(signedBytes).digest().equals(hashed)) {
      throw new SignatureProblem("it was changed after signing");
    }
  }
  const content = cms.eContent ?? signedBytes;
  if (cms.signedAttributesDer === undefined) return; // the signature itself covers the content
  const digest = cms.signedAttributes.get(OID.messageDigest)?.[0];
  if (!digest) throw new SignatureProblem("its CMS has no messageDigest attribute");
  if (!createHash(hash).update(content).digest().equals(octetBytes(digest))) {
    throw new SignatureProblem("it was changed after signing");
  }
}

function checkSignature(cms: ParsedCms, certificate: X509Certificate): void {
  if (cms.signatureAlgorithm === OID_RSASSA_PSS) throw new SignatureProblem("RSASSA-PSS signatures are not supported");
  const hash = SIGNATURE_HASHES[cms.signatureAlgorithm] ?? hashName(cms.digestAlgorithm);
  const data = cms.signedAttributesDer;
  if (data === undefined) throw new SignatureProblem("its CMS has no signed attributes");
  let ok: boolean;
  try {
    ok = cryptoVerify(hash, data, { key: certificate.publicKey, dsaEncoding: "der" }, cms.signature);
  } catch {
    ok = false;
  }
  if (!ok) throw new SignatureProblem("its cryptographic signature does not match the signer's certificate");
}

/** signingCertificateV2 (when present) must name the signer certificate by its hash. */
function checkSigningCertificateAttribute(cms: ParsedCms, certificate: X509Certificate): void {
  const value = cms.signedAttributes.get(OID.signingCertificateV2)?.[0];
  if (!value) return;
  const first = items(items(value)[0])[0];
  const fields = items(first);
  let hash = "sha256";
  let index = 0;
  if (fields[0]!.type === Type.SEQUENCE) {
    hash = hashName(oidOf(items(fields[0])[0]));
    index = 1;
  }
  const expected = octetBytes(fields[index]!);
  if (!createHash(hash).update(certificate.raw).digest().equals(expected)) {
    throw new SignatureProblem("its signingCertificateV2 attribute names another certificate");
  }
}

/** Subject CN and e-mail (subject emailAddress, else the first SAN rfc822Name). */
function subjectIdentity(certificate: X509Certificate): { commonName: string; email: string } {
  let commonName = "";
  let email = "";
  try {
    const tbs = items(items(asn1.fromDer(Buffer.from(certificate.raw).toString("binary")))[0]);
    const offset = tbs[0]!.tagClass === Class.CONTEXT_SPECIFIC && tbs[0]!.type === 0 ? 1 : 0;
    for (const rdn of items(tbs[offset + 4])) {
      for (const atv of items(rdn)) {
        const [type, value] = items(atv);
        const oid = oidOf(type);
        if (oid === OID.commonName && !commonName) commonName = directoryString(value!);
        if (oid === OID_EMAIL_ADDRESS && !email) email = directoryString(value!);
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

/** Whether `certificate` is a root or is issued, through CMS intermediates, by one. */
function chainsToRoot(certificate: X509Certificate, intermediates: X509Certificate[], roots: X509Certificate[]): boolean {
  const isRoot = (c: X509Certificate) => roots.some((root) => Buffer.from(root.raw).equals(Buffer.from(c.raw)));
  const issuedBy = (child: X509Certificate, issuer: X509Certificate) =>
    safe(() => child.checkIssued(issuer) && child.verify(issuer.publicKey), false);
  let current = certificate;
  const seen = new Set<X509Certificate>();
  for (let depth = 0; depth < 10; depth++) {
    if (isRoot(current)) return true;
    if (roots.some((root) => issuedBy(current, root))) return true;
    seen.add(current);
    const next = intermediates.find((candidate) => !seen.has(candidate) && issuedBy(current, candidate));
    if (!next) return false;
    current = next;
  }
  return false;
}

// ---------------------------------------------------------------------------
// the verdict

function judge(signers: PdfSignatureReport[]): { valid: boolean; reason: string } {
  const broken = signers.findIndex((signer) => !signer.intact);
  if (broken >= 0) {
    return { valid: false, reason: `Signature ${broken + 1} does not match the document: ${signers[broken]!.problem}.` };
  }
  const modified = signers.findIndex((signer) => !signer.laterChangesPermitted);
  if (modified >= 0) {
    return { valid: false, reason: `The document was modified after signature ${modified + 1}: ${signers[modified]!.problem}.` };
  }
  const untrusted = signers.findIndex((signer) => signer.problem === "not trusted");
  if (untrusted >= 0) {
    return {
      valid: false,
      reason: `Signature ${untrusted + 1} is not trusted: its certificate does not chain up to a trusted root.`,
    };
  }
  const revoked = signers.findIndex((signer) => signer.subIndication === "REVOKED_NO_POE");
  if (revoked >= 0) return { valid: false, reason: `Signature ${revoked + 1}: ${signers[revoked]!.revocation}.` };
  const n = signers.length;
  return {
    valid: true,
    reason:
      n === 1 && signers[0]!.coversWholeDocument
        ? "All 1 signature(s) are intact and cover the whole document."
        : `All ${n} signature(s) are intact, and every later revision makes only permitted changes.`,
  };
}
