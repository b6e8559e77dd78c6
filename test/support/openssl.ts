/**
 * Test support for the signing unit tests: the `openssl` command line as an
 * independent validator, and a throw-away PKI (root CA + signer) made with it.
 * Not a test file itself.
 */
import { execFile, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

export interface OpensslResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs `openssl args…` in `cwd`; never throws for a non-zero exit. */
export function runOpenssl(args: string[], cwd: string): OpensslResult {
  const result = spawnSync("openssl", args, { cwd, encoding: "utf8" });
  if (result.error) {
    throw new Error(`cannot run openssl (install the Debian package "openssl"): ${result.error.message}`);
  }
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** Runs `openssl args…` and returns stdout; throws with stderr on failure. */
export function openssl(args: string[], cwd: string): string {
  const result = runOpenssl(args, cwd);
  if (result.status !== 0) {
    throw new Error(`openssl ${args.join(" ")} exited ${result.status}:\n${result.stderr}`);
  }
  return result.stdout;
}

const execFileAsync = promisify(execFile);

/** Like {@link openssl}, without blocking the event loop (for servers in the test process, and work run in parallel). */
export async function opensslAsync(args: string[], cwd: string): Promise<string> {
  try {
    return (await execFileAsync("openssl", args, { cwd, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (error) {
    const failure = error as Error & { code?: unknown; stderr?: string };
    throw new Error(`openssl ${args.join(" ")} exited ${String(failure.code)}:\n${failure.stderr ?? failure.message}`, { cause: error });
  }
}

export type TestKeyType = "rsa" | "ec";

/** `openssl req` arguments for a new key: RSA-2048 or EC P-256. */
export function newKeyArgs(type: TestKeyType): string[] {
  return type === "rsa"
    ? ["-newkey", "rsa:2048"]
    : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
}

/** File names of a PKI made by {@link createTestPki}, relative to its directory. */
export const TEST_PKI = {
  rootKey: "root.key",
  rootCertificate: "root.pem",
  signerKey: "signer.key",
  signerCertificate: "signer.pem",
} as const;

/**
 * Creates in `directory` a root CA and a signer certificate it issued
 * (keyUsage digitalSignature + nonRepudiation, extendedKeyUsage
 * emailProtection), both with keys of `type`; unencrypted PEM keys.
 */
export function createTestPki(directory: string, type: TestKeyType): void {
  openssl(
    [
      "req", "-x509", ...newKeyArgs(type), "-nodes", "-sha256", "-days", "30",
      "-keyout", TEST_PKI.rootKey, "-out", TEST_PKI.rootCertificate,
      "-subj", `/O=DocService tests/CN=Test root CA (${type})`,
      "-addext", "basicConstraints=critical,CA:TRUE",
      "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    ],
    directory,
  );
  openssl(
    [
      "req", "-new", ...newKeyArgs(type), "-nodes",
      "-keyout", TEST_PKI.signerKey, "-out", "signer.csr",
      "-subj", `/O=DocService tests/CN=Test signer (${type})`,
    ],
    directory,
  );
  writeFileSync(
    join(directory, "signer.ext"),
    [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature,nonRepudiation",
      "extendedKeyUsage=emailProtection",
      "subjectKeyIdentifier=hash",
      "authorityKeyIdentifier=keyid",
      "",
    ].join("\n"),
  );
  openssl(
    [
      "x509", "-req", "-in", "signer.csr", "-sha256", "-days", "30",
      "-CA", TEST_PKI.rootCertificate, "-CAkey", TEST_PKI.rootKey, "-CAcreateserial",
      "-extfile", "signer.ext", "-out", TEST_PKI.signerCertificate,
    ],
    directory,
  );
}
