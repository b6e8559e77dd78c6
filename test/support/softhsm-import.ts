/**
 * Puts a key made outside a SoftHSM2 token (e.g. a test-pki.ts signer's) onto
 * one made by softhsm.ts, so the PKCS#11 backend signs with a certificate of a
 * given PKI. Not a test file itself.
 */
import { X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pemCertificates, type CertFiles } from "./openssl-ca.js";
import { runCommand } from "./run-command.js";
import type { SoftHsmToken } from "./softhsm.js";

export interface ImportedSigner extends CertFiles {
  /** PEM: the certificates above `cert`, issuer first. */
  chain: string;
}

/**
 * Writes the private key of `signer` (PEM; CKA_SIGN) and its certificate onto
 * the token, both under `label` and `id` (hex), and each certificate of the
 * chain under "LABEL chain N" without an id, so that the backend's lookup (the
 * certificate with the key's label, else its id) finds the signer's own.
 */
export async function importIntoSoftHsm(
  token: Pick<SoftHsmToken, "modulePath" | "tokenLabel" | "userPin" | "confPath">,
  signer: ImportedSigner,
  { label, id }: { label: string; id: string },
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "docservice-softhsm-import-"));
  const tool = async (args: string[]) => {
    const base = ["--module", token.modulePath, "--token-label", token.tokenLabel, "--login", "--pin", token.userPin];
    const result = await runCommand("pkcs11-tool", [...base, ...args], { env: { SOFTHSM2_CONF: token.confPath }, timeoutMs: 30_000 });
    if (result.code !== 0) throw new Error(`pkcs11-tool ${args.join(" ")} exited ${result.code}: ${result.output}`);
  };
  const writeCertificate = async (pem: string, objectLabel: string, objectId?: string) => {
    const der = join(dir, `${objectLabel}.der`);
    await writeFile(der, new X509Certificate(pem).raw);
    await tool(["--write-object", der, "--type", "cert", "--label", objectLabel, ...(objectId ? ["--id", objectId] : [])]);
  };
  try {
    await tool(["--write-object", signer.key, "--type", "privkey", "--usage-sign", "--label", label, "--id", id]);
    await writeCertificate(await readFile(signer.cert, "utf8"), label, id);
    for (const [index, pem] of pemCertificates(await readFile(signer.chain, "utf8")).entries()) {
      await writeCertificate(pem, `${label} chain ${index + 1}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
