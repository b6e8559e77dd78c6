/**
 * The embedded-mode signing key: a private key held by this process
 * (node:crypto KeyObject), either generated on first start into the data
 * directory with a self-signed certificate, or loaded from an operator's own
 * PEM or PKCS#12 files. Signing is node:crypto's native RSA/ECDSA, run on the
 * libuv thread pool so it does not block the event loop, or synchronously in a
 * signing worker thread ({@link signingInThisThread}).
 */
import {
  X509Certificate,
  createPrivateKey,
  generateKeyPair,
  sign as cryptoSign,
  type KeyObject,
} from "node:crypto";
import { chmod, link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import forge from "node-forge";
import { temporaryPath, writeAtomically } from "../../core/atomic-file.js";
import { readCertificate } from "../cms/asn1.js";
import { createSelfSignedCertificate } from "./self-signed-certificate.js";
import type { KeyAlgorithm, SigningKey, WorkerKey } from "./signing-key.js";

/** File names inside the directory given to {@link loadOrCreateLocalKey}. */
export const LOCAL_KEY_FILE = "signing-key.pem";
export const LOCAL_CERTIFICATE_FILE = "signing-certificate.pem";
export const DEFAULT_LOCAL_KEY_SUBJECT = "DocService signing (embedded)";

export interface LocalKeyOptions {
  /** Algorithm of a newly generated key (default RSA-2048). If set, an existing key must match it. */
  algorithm?: KeyAlgorithm;
  /** Common name of a newly generated self-signed certificate (default {@link DEFAULT_LOCAL_KEY_SUBJECT}). */
  subject?: string;
}

/**
 * Loads `signing-key.pem` (PKCS#8, mode 0600) and `signing-certificate.pem`
 * from `directory`, creating what is missing: a new key of
 * `options.algorithm`, and for a key without certificate a self-signed
 * certificate valid 10 years. The directory is created (mode 0700) if needed.
 * `subject` only matters when a certificate is created.
 */
export async function loadOrCreateLocalKey(directory: string, options: LocalKeyOptions = {}): Promise<SigningKey> {
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const keyPath = join(directory, LOCAL_KEY_FILE);
  const certificatePath = join(directory, LOCAL_CERTIFICATE_FILE);

  let keyPem = await readIfExists(keyPath);
  if (keyPem === undefined) {
    const generated = await generatePrivateKey(options.algorithm ?? "RSA-2048");
    const pem = generated.export({ type: "pkcs8", format: "pem" }) as string;
    // another process may have won the race; then its key is the key
    keyPem = (await createExclusively(keyPath, pem, 0o600)) ? pem : await readFile(keyPath, "utf8");
  }
  const privateKey = parsePrivateKey(keyPem, undefined, keyPath);
  const algorithm = keyAlgorithmOf(privateKey, keyPath);
  if (options.algorithm !== undefined && options.algorithm !== algorithm) {
    throw new Error(
      `${keyPath} holds an ${algorithm} key but ${options.algorithm} was asked for; ` +
        `remove ${LOCAL_KEY_FILE} and ${LOCAL_CERTIFICATE_FILE} to generate a new key`,
    );
  }

  let certificatePem = await readIfExists(certificatePath);
  if (certificatePem === undefined) {
    const der = createSelfSignedCertificate(privateKey, { commonName: options.subject ?? DEFAULT_LOCAL_KEY_SUBJECT });
    certificatePem = derToPem(der, "CERTIFICATE");
    await writeAtomically(certificatePath, certificatePem, 0o644);
  }
  return assembleKey(privateKey, parsePemCertificates(certificatePem, certificatePath), certificatePath);
}

/** An operator's own key: PEM key + certificate(s), or a PKCS#12 file. Contents, not paths. */
export type LocalKeyFiles =
  | {
      /** PKCS#8, PKCS#1 or SEC1 PEM, possibly encrypted (then give `passphrase`). */
      keyPem: string | Buffer;
      passphrase?: string;
      /** The signing certificate; may also hold the chain ("fullchain.pem"). */
      certificatePem: string | Buffer;
      chainPem?: string | Buffer;
    }
  | {
      /** DER PKCS#12 (.p12 / .pfx) with the key and usually the certificate and chain. */
      pkcs12: Buffer;
      passphrase: string;
      /** Only needed when the PKCS#12 file holds no certificate for the key. */
      certificatePem?: string | Buffer;
      chainPem?: string | Buffer;
    };

/**
 * Builds a {@link SigningKey} from an operator's key material. The signing
 * certificate is the one whose public key matches the private key; the other
 * certificates become the chain, ordered issuer first.
 */
export async function loadLocalKeyFromFiles(files: LocalKeyFiles): Promise<SigningKey> {
  let privateKey: KeyObject;
  const certificates: Buffer[] = [];
  if ("pkcs12" in files) {
    const contents = readPkcs12(files.pkcs12, files.passphrase);
    privateKey = contents.privateKey;
    certificates.push(...contents.certificates);
  } else {
    privateKey = parsePrivateKey(files.keyPem, files.passphrase, "keyPem");
  }
  if (files.certificatePem !== undefined) certificates.push(...parsePemCertificates(files.certificatePem, "certificatePem"));
  if (files.chainPem !== undefined) certificates.push(...parsePemCertificates(files.chainPem, "chainPem"));
  return assembleKey(privateKey, certificates, "pkcs12" in files ? "the PKCS#12 file" : "certificatePem");
}

class LocalSigningKey implements SigningKey {
  #privateKey: KeyObject | undefined;

  constructor(
    privateKey: KeyObject,
    readonly algorithm: KeyAlgorithm,
    readonly certificateDer: Buffer,
    readonly chainDer: Buffer[],
  ) {
    this.#privateKey = privateKey;
  }

  keyForWorkers(): WorkerKey {
    if (this.#privateKey === undefined) throw new Error("the signing key is closed");
    return localWorkerKey(this.#privateKey, this);
  }

  sign(data: Buffer): Promise<Buffer> {
    const key = this.#privateKey;
    if (key === undefined) return Promise.reject(new Error("the signing key is closed"));
    return new Promise((resolve, reject) => {
      cryptoSign("sha256", data, signOptions(key), (error, signature) => (error ? reject(error) : resolve(signature)));
    });
  }

  async close(): Promise<void> {
    this.#privateKey = undefined;
  }
}

/** RSA: PKCS#1 v1.5 (the default padding); EC: DER ECDSA-Sig-Value. */
const signOptions = (key: KeyObject) => ({ key, dsaEncoding: "der" as const });

/**
 * A key this process holds, signing synchronously in the calling thread: a
 * signing worker's thread has nothing else to do while its document's
 * signature is computed, and the thread pool's round trip (or the parent's)
 * would only add to each one.
 */
export function signingInThisThread(privateKey: KeyObject, parts: Pick<SigningKey, "algorithm" | "certificateDer" | "chainDer">): SigningKey {
  return {
    algorithm: parts.algorithm,
    certificateDer: parts.certificateDer,
    chainDer: parts.chainDer,
    keyForWorkers: () => localWorkerKey(privateKey, parts),
    sign(data) {
      try {
        return Promise.resolve(cryptoSign("sha256", data, signOptions(privateKey)));
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
    close: async () => {},
  };
}

function localWorkerKey(privateKey: KeyObject, parts: Pick<SigningKey, "algorithm" | "certificateDer" | "chainDer">): WorkerKey {
  return { kind: "local", privateKey, algorithm: parts.algorithm, certificateDer: parts.certificateDer, chainDer: parts.chainDer };
}

function assembleKey(privateKey: KeyObject, certificateDers: Buffer[], source: string): SigningKey {
  const algorithm = keyAlgorithmOf(privateKey, "the private key");
  const certificates = uniqueCertificates(certificateDers);
  const signer = certificates.find((certificate) => certificate.checkPrivateKey(privateKey));
  if (!signer) {
    throw new Error(
      certificates.length === 0
        ? `no certificate was given for the signing key (${source})`
        : `no certificate in ${source} matches the private key`,
    );
  }
  const chain = orderChain(signer, certificates.filter((certificate) => certificate !== signer));
  // fail now, not at the first signature, if CMS cannot embed them as they are
  for (const certificate of [signer, ...chain]) readCertificate(certificate.raw);
  return new LocalSigningKey(privateKey, algorithm, Buffer.from(signer.raw), chain.map((c) => Buffer.from(c.raw)));
}

/** Issuer path from `signer` upwards, then any certificates not on it. */
function orderChain(signer: X509Certificate, others: X509Certificate[]): X509Certificate[] {
  const remaining = [...others];
  const ordered: X509Certificate[] = [];
  let current = signer;
  while (!current.checkIssued(current)) {
    const index = remaining.findIndex((candidate) => current.checkIssued(candidate));
    if (index < 0) break;
    current = remaining.splice(index, 1)[0]!;
    ordered.push(current);
  }
  return [...ordered, ...remaining];
}

function uniqueCertificates(ders: Buffer[]): X509Certificate[] {
  const seen = new Set<string>();
  const result: X509Certificate[] = [];
  for (const der of ders) {
    const key = der.toString("base64");
    if (seen.has(key)) continue;
    seen.add(key);
    result.push(new X509Certificate(der));
  }
  return result;
}

function keyAlgorithmOf(key: KeyObject, what: string): KeyAlgorithm {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === "rsa") {
    if (details.modulusLength === 2048) return "RSA-2048";
    if (details.modulusLength === 3072) return "RSA-3072";
    throw new Error(`${what}: RSA keys of ${details.modulusLength} bits are not supported (2048 or 3072)`);
  }
  if (key.asymmetricKeyType === "ec") {
    if (details.namedCurve === "prime256v1") return "ECDSA-P256";
    throw new Error(`${what}: EC curve ${details.namedCurve} is not supported (P-256)`);
  }
  throw new Error(`${what}: ${key.asymmetricKeyType ?? "unknown"} keys are not supported (RSA or EC P-256)`);
}

async function generatePrivateKey(algorithm: KeyAlgorithm): Promise<KeyObject> {
  const { privateKey } = await new Promise<{ privateKey: KeyObject }>((resolve, reject) => {
    const done = (error: Error | null, _publicKey: KeyObject, privateKey: KeyObject) =>
      error ? reject(error) : resolve({ privateKey });
    switch (algorithm) {
      case "RSA-2048":
      case "RSA-3072":
        generateKeyPair("rsa", { modulusLength: algorithm === "RSA-2048" ? 2048 : 3072, publicExponent: 0x10001 }, done);
        break;
      case "ECDSA-P256":
        generateKeyPair("ec", { namedCurve: "prime256v1" }, done);
        break;
      default:
        reject(new Error(`unsupported key algorithm ${String(algorithm)}`));
    }
  });
  return privateKey;
}

function parsePrivateKey(pem: string | Buffer, passphrase: string | undefined, what: string): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: "pem", ...(passphrase !== undefined ? { passphrase } : {}) });
  } catch (error) {
    throw new Error(`${what}: cannot read the private key: ${(error as Error).message}`);
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

export function parsePemCertificates(pem: string | Buffer, what: string): Buffer[] {
  const blocks = pem.toString().match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new Error(`${what}: no PEM certificate found`);
  return blocks.map((block) => {
    try {
      return Buffer.from(new X509Certificate(block).raw);
    } catch (error) {
      throw new Error(`${what}: cannot read a certificate: ${(error as Error).message}`);
    }
  });
}

function readPkcs12(der: Buffer, passphrase: string): { privateKey: KeyObject; certificates: Buffer[] } {
  let pfx: forge.pkcs12.Pkcs12Pfx;
  try {
    pfx = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(der.toString("binary")), false, passphrase);
  } catch (error) {
    throw new Error(`cannot read the PKCS#12 file (wrong passphrase?): ${(error as Error).message}`);
  }
  const { oids } = forge.pki;
  let privateKey: KeyObject | undefined;
  const certificates: Buffer[] = [];
  for (const bag of pfx.safeContents.flatMap((contents) => contents.safeBags)) {
    if (bag.type === oids.keyBag || bag.type === oids.pkcs8ShroudedKeyBag) {
      if (privateKey !== undefined) continue; // the first key is the signing key
      // forge decodes RSA keys itself and leaves other key types as PrivateKeyInfo ASN.1
      const privateKeyInfo = bag.key
        ? forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key))
        : bag.asn1;
      privateKey = createPrivateKey({
        key: Buffer.from(forge.asn1.toDer(privateKeyInfo).getBytes(), "binary"),
        format: "der",
        type: "pkcs8",
      });
    } else if (bag.type === oids.certBag) {
      // forge decodes RSA certificates (keeping the signed TBSCertificate as read) and leaves others as ASN.1
      const certificate = bag.cert ? forge.pki.certificateToAsn1(bag.cert) : bag.asn1;
      certificates.push(Buffer.from(forge.asn1.toDer(certificate).getBytes(), "binary"));
    }
  }
  if (privateKey === undefined) throw new Error("the PKCS#12 file holds no private key");
  return { privateKey, certificates };
}

function derToPem(der: Buffer, label: string): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Writes a complete file at `path` unless one exists; false if it existed. */
async function createExclusively(path: string, contents: string, mode: number): Promise<boolean> {
  const temporary = temporaryPath(path);
  await writeFile(temporary, contents, { mode, flag: "wx" });
  try {
    await chmod(temporary, mode); // independent of the umask
    await link(temporary, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "ENOSYS") {
      // a file system without hard links: exclusive create instead (not crash-atomic)
      try {
        await writeFile(path, contents, { mode, flag: "wx" });
        await chmod(path, mode);
        return true;
      } catch (fallbackError) {
        if ((fallbackError as NodeJS.ErrnoException).code === "EEXIST") return false;
        throw fallbackError;
      }
    }
    throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}
