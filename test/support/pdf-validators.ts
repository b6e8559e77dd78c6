/**
 * Independent validators of signed PDFs for the signing tests: poppler's
 * `pdfsig` (Debian poppler-utils) and pyHanko's `pyhanko sign validate`
 * (PyPI, pinned in scripts/testenv/pyhanko-requirements.txt). Both are
 * installed by scripts/testenv/setup.sh. Not a test file itself.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { tool } from "./pdf-tools.js";

export interface PdfsigSignature {
  fieldName: string | undefined;
  /** "ETSI.CAdES.detached", "adbe.pkcs7.detached", … */
  signatureType: string | undefined;
  /** "Signature is Valid.", "Digest Mismatch.", … */
  validation: string | undefined;
  /** Validation is exactly "Signature is Valid." */
  valid: boolean;
  /** pdfsig printed "Total document signed": the /ByteRange covers the whole file but /Contents. */
  totalDocumentSigned: boolean;
  hashAlgorithm: string | undefined;
  /** Only with certificate validation (not -nocert); "Certificate issuer is unknown." for a test CA. */
  certificateValidation: string | undefined;
}

export interface PdfsigResult {
  /** pdfsig's exit code (0 also when a signature is invalid; non-zero for an unreadable file). */
  code: number;
  signatures: PdfsigSignature[];
  raw: string;
}

/**
 * `pdfsig -nocert FILE`: signature validity without certificate-chain checks
 * (poppler would look for trust anchors in an NSS database, which the tests do
 * not have; pyHanko checks the chain).
 */
export async function pdfsig(file: string): Promise<PdfsigResult> {
  const result = await tool("pdfsig", ["-nocert", file]);
  const raw = result.stdout + result.stderr;
  const blocks = result.stdout.split(/^Signature #\d+:\s*$/m).slice(1);
  const signatures = blocks.map((block): PdfsigSignature => {
    const field = (label: string) => block.match(new RegExp(`^\\s*- ${label}: (.*)$`, "m"))?.[1]?.trim();
    const validation = field("Signature Validation");
    return {
      fieldName: field("Signature Field Name"),
      signatureType: field("Signature Type"),
      validation,
      valid: validation === "Signature is Valid.",
      totalDocumentSigned: /^\s*- Total document signed\s*$/m.test(block),
      hashAlgorithm: field("Signing Hash Algorithm"),
      certificateValidation: field("Certificate Validation"),
    };
  });
  return { code: result.code, signatures, raw };
}

/** The pyhanko of the test environment: $DOCSERVICE_CACHE/bin/pyhanko (setup.sh), else PATH. */
export function pyhankoCommand(): string {
  const cached = join(process.env.DOCSERVICE_CACHE ?? join(homedir(), ".cache", "docservice"), "bin", "pyhanko");
  return existsSync(cached) ? cached : "pyhanko";
}

export interface PyhankoResult {
  /** pyhanko's exit code: 0 when every signature is judged valid, 1 otherwise. */
  code: number;
  /** Number of signature fields reported ("Field N: …"). */
  signatureCount: number;
  /**
   * "The signature is cryptographically sound.": the digest matches the
   * covered bytes (pyHanko's "intact") and the signature verifies with the
   * certificate's key ("valid"); its CLI reports them together.
   */
  intact: boolean;
  /** "The signer's certificate is trusted.": a path to the given trust root. */
  trusted: boolean;
  /** "The signature covers the entire file." */
  coversEntireFile: boolean;
  /**
   * "Signature timestamp token: …" and "The timestamp token is
   * cryptographically sound.": an RFC 3161 signature timestamp (PAdES B-T)
   * whose token matches the signature.
   */
  timestamped: boolean;
  /** "The TSA certificate is trusted.": the timestamp's TSA chains up to a given trust root. */
  timestampTrusted: boolean;
  /** The signature timestamp's time as pyHanko prints it (ISO 8601), when there is one. */
  timestampTime: string | undefined;
  /** "The signature is judged VALID.": pyHanko's bottom line (intact, valid and trusted, a timestamp included). */
  valid: boolean;
  /** e.g. "sha256_rsa", "sha256_ecdsa" */
  mechanism: string | undefined;
  raw: string;
}

/**
 * `pyhanko sign validate --pretty-print --trust ROOT… --trust-replace FILE`:
 * `trustRootPem` (paths to PEM certificates) are the only trust anchors; for a
 * self-signed key pass its own certificate, for a timestamped signature the
 * TSA's root too (an untrusted TSA makes the signature INVALID). Revocation
 * is not checked (the test certificates name no CRL or OCSP endpoint;
 * `--no-revocation-check` keeps pyHanko from going online). Expects one
 * signature; with more, the flags say whether all of them passed.
 */
export async function pyhankoValidate(file: string, trustRootPem: string | string[]): Promise<PyhankoResult> {
  const trust = (Array.isArray(trustRootPem) ? trustRootPem : [trustRootPem]).flatMap((root) => ["--trust", root]);
  const result = await tool(pyhankoCommand(), [
    "sign", "validate", "--pretty-print", "--no-revocation-check",
    ...trust, "--trust-replace", file,
  ]);
  const raw = result.stdout + result.stderr;
  const out = result.stdout;
  const count = (pattern: RegExp) => out.match(new RegExp(pattern.source, "gm"))?.length ?? 0;
  const signatureCount = count(/^Field \d+: /);
  const all = (pattern: RegExp) => signatureCount > 0 && count(pattern) === signatureCount;
  return {
    code: result.code,
    signatureCount,
    intact: all(/^The signature is cryptographically sound\.$/),
    trusted: all(/^The signer's certificate is trusted\.$/),
    coversEntireFile: all(/^The signature covers the entire file\.$/),
    timestamped: all(/^Signature timestamp token: /) && all(/^The timestamp token is cryptographically sound\.$/),
    timestampTrusted: all(/^The TSA certificate is trusted\.$/),
    timestampTime: out.match(/^Signature timestamp token: (\S+)$/m)?.[1],
    valid: result.code === 0 && all(/^The signature is judged VALID\.$/),
    mechanism: out.match(/^The signature mechanism used was '([^']+)'\.$/m)?.[1],
    raw,
  };
}
