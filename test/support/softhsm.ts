import { execFile } from "node:child_process";
import { createPublicKey } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { KeyAlgorithm } from "../../services/signing/keys/signing-key.js";

const run = promisify(execFile);

/** Installed by scripts/testenv/setup.sh (Debian package libsofthsm2). */
export const SOFTHSM_MODULE = "/usr/lib/softhsm/libsofthsm2.so";

export interface SoftHsmKey {
  /** CKA_LABEL of the private key, the public key and the certificate. */
  label: string;
  /** CKA_ID of the same three objects, hex. */
  id: string;
  algorithm: KeyAlgorithm;
  /** The key's certificate, issued by the test CA (also stored on the token). */
  certificatePem: string;
}

export interface SoftHsmToken {
  modulePath: string;
  tokenLabel: string;
  userPin: string;
  soPin: string;
  keys: SoftHsmKey[];
  caCertificatePem: string;
  caCertificatePath: string;
  /** The softhsm2.conf of this token; also in process.env.SOFTHSM2_CONF. */
  confPath: string;
  /** The temp dir holding the conf, the token files and the CA. */
  dir: string;
  /** Deletes the token and the CA, and restores the previous SOFTHSM2_CONF. */
  cleanup(): Promise<void>;
}

const KEYS: { label: string; id: string; algorithm: KeyAlgorithm; keyType: string }[] = [
  { label: "rsa-2048", id: "01", algorithm: "RSA-2048", keyType: "rsa:2048" },
  { label: "rsa-3072", id: "02", algorithm: "RSA-3072", keyType: "rsa:3072" },
  { label: "ecdsa-p256", id: "03", algorithm: "ECDSA-P256", keyType: "EC:prime256v1" },
];

/** Extensions of the end-entity certificates the test CA issues. */
const SIGNER_EXTENSIONS = [
  "basicConstraints = critical, CA:FALSE",
  "keyUsage = critical, digitalSignature, nonRepudiation",
  "subjectKeyIdentifier = hash",
  "authorityKeyIdentifier = keyid",
  "",
].join("\n");

/**
 * A fresh SoftHSM2 token in a temp dir, for one test run: a test CA (RSA-2048,
 * self-signed, files only) and three key pairs generated ON the token with
 * pkcs11-tool (RSA-2048, RSA-3072, ECDSA P-256; labels in `keys`), each with a
 * certificate from the CA for its public key, imported onto the token under the
 * same CKA_LABEL and CKA_ID. Needs softhsm2, opensc and openssl
 * (scripts/testenv/setup.sh).
 *
 * SoftHSM2 finds its token directory through the SOFTHSM2_CONF environment
 * variable, which it reads when the module is initialised (C_Initialize). This
 * sets it for the current process, so create the token before the first
 * PKCS#11 key is opened: a module that is already initialised in this process
 * keeps the configuration it started with. Child processes that load the
 * module need `confPath` in their SOFTHSM2_CONF too.
 */
export async function createSoftHsmToken(options: { tokenLabel?: string } = {}): Promise<SoftHsmToken> {
  if (!existsSync(SOFTHSM_MODULE)) {
    throw new Error(`${SOFTHSM_MODULE} not found: run scripts/testenv/setup.sh`);
  }
  const tokenLabel = options.tokenLabel ?? "docservice-test";
  const userPin = "246810";
  const soPin = "13579111";
  const dir = await mkdtemp(join(tmpdir(), "docservice-softhsm-"));
  const previousConf = process.env.SOFTHSM2_CONF;
  const cleanup = async () => {
    if (previousConf === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = previousConf;
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const confPath = join(dir, "softhsm2.conf");
    await mkdir(join(dir, "tokens"));
    await writeFile(
      confPath,
      [
        `directories.tokendir = ${join(dir, "tokens")}`,
        "objectstore.backend = file",
        "log.level = ERROR",
        "slots.removable = false",
        "",
      ].join("\n"),
    );
    process.env.SOFTHSM2_CONF = confPath;
    const env = { ...process.env, SOFTHSM2_CONF: confPath };
    const tool = (args: string[]) => command("pkcs11-tool", ["--module", SOFTHSM_MODULE, "--token-label", tokenLabel, ...args], env);

    await command("softhsm2-util", ["--init-token", "--free", "--label", tokenLabel, "--so-pin", soPin, "--pin", userPin], env);

    const caKeyPath = join(dir, "ca.key");
    const caCertificatePath = join(dir, "ca.pem");
    await command("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2",
      "-keyout", caKeyPath, "-out", caCertificatePath,
      "-subj", "/O=DocService tests/CN=DocService Test CA",
      "-addext", "basicConstraints = critical, CA:TRUE",
      "-addext", "keyUsage = critical, keyCertSign, cRLSign",
    ], env);
    const extensionsPath = join(dir, "signer.ext");
    await writeFile(extensionsPath, SIGNER_EXTENSIONS);

    const keys: SoftHsmKey[] = [];
    for (const [index, spec] of KEYS.entries()) {
      const login = ["--login", "--pin", userPin];
      await tool([...login, "--keypairgen", "--key-type", spec.keyType, "--id", spec.id, "--label", spec.label, "--usage-sign"]);

      // The public key leaves the token (SubjectPublicKeyInfo, DER); the CA
      // certifies it without a CSR, since the private key never leaves.
      const publicDer = join(dir, `${spec.label}.pub.der`);
      const publicPem = join(dir, `${spec.label}.pub.pem`);
      await tool(["--read-object", "--type", "pubkey", "--id", spec.id, "--output-file", publicDer]);
      const publicKey = createPublicKey({ key: await readFile(publicDer), format: "der", type: "spki" });
      await writeFile(publicPem, publicKey.export({ format: "pem", type: "spki" }));

      const certificatePath = join(dir, `${spec.label}.pem`);
      const certificateDer = join(dir, `${spec.label}.der`);
      await command("openssl", [
        "x509", "-new", "-sha256", "-days", "2",
        "-subj", `/O=DocService tests/CN=DocService test signer ${spec.label}`,
        "-force_pubkey", publicPem,
        "-CA", caCertificatePath, "-CAkey", caKeyPath,
        "-set_serial", String(1000 + index),
        "-extfile", extensionsPath,
        "-out", certificatePath,
      ], env);
      await command("openssl", ["x509", "-in", certificatePath, "-outform", "DER", "-out", certificateDer], env);
      await tool([...login, "--write-object", certificateDer, "--type", "cert", "--id", spec.id, "--label", spec.label]);

      keys.push({
        label: spec.label,
        id: spec.id,
        algorithm: spec.algorithm,
        certificatePem: await readFile(certificatePath, "utf8"),
      });
    }

    return {
      modulePath: SOFTHSM_MODULE,
      tokenLabel,
      userPin,
      soPin,
      keys,
      caCertificatePem: await readFile(caCertificatePath, "utf8"),
      caCertificatePath,
      confPath,
      dir,
      cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

async function command(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await run(file, args, { env, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const failed = error as Error & { code?: unknown; stderr?: string };
    const hint = failed.code === "ENOENT" ? " (not installed: run scripts/testenv/setup.sh)" : "";
    throw new Error(`${file} ${args[0] ?? ""} failed${hint}: ${failed.stderr?.trim() || failed.message}`, { cause: error });
  }
}
