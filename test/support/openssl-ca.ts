import { X509Certificate, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { newKeyArgs, openssl, opensslAsync, type TestKeyType } from "./openssl.js";

/** PEM files of a certificate and its unencrypted key. */
export interface CertFiles {
  cert: string;
  key: string;
}

export interface OpensslCa {
  /** ca.pem and ca.key in the CA's directory. */
  ca: CertFiles;
  /** A certificate the CA signs, written as NAME.pem and NAME.key, with `-addext` extensions. */
  issue(name: string, subject: string, extensions: string[]): CertFiles;
}

const EC_KEY = [...newKeyArgs("ec"), "-nodes", "-days", "2"];

/** A throwaway CA made with openssl in `dir` (which must exist), issuing EC P-256 certificates valid for two days. */
export function createOpensslCa(dir: string, subject: string): OpensslCa {
  const write = (name: string, subject: string, extensions: string[], signer: string[]): CertFiles => {
    openssl(
      ["req", "-x509", ...signer, ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.pem`, "-subj", subject, ...extensions.flatMap((extension) => ["-addext", extension])],
      dir,
    );
    return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  };
  const ca = write("ca", subject, ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"], []);
  return { ca, issue: (name, subject, extensions) => write(name, subject, extensions, ["-CA", "ca.pem", "-CAkey", "ca.key"]) };
}

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

/** A certificate issued by a {@link DatabaseCa}, with its serial number as openssl's index writes it (upper-case hex). */
export interface IssuedCertFiles extends CertFiles {
  serial: string;
}

/** RFC 5280 CRLReason names, as `openssl ca -crl_reason` takes them. */
export type RevocationReason =
  | "unspecified"
  | "keyCompromise"
  | "CACompromise"
  | "affiliationChanged"
  | "superseded"
  | "cessationOfOperation"
  | "certificateHold";

export interface Revocation {
  /** Second precision, as in the CRL and the OCSP response. */
  time: Date;
  reason: RevocationReason;
}

/**
 * A CA run by `openssl ca` with its certificate database (index.txt): it
 * records what it issues and revokes, and both its CRLs (`openssl ca -gencrl`)
 * and its OCSP responses (`openssl ocsp -index`) are made from that database
 * when asked for, so they always show the current revocations.
 */
export interface DatabaseCa {
  ca: IssuedCertFiles;
  /** openssl's database of the certificates this CA issued. */
  index: string;
  /**
   * A new key of `keyType` (unencrypted PKCS#8 PEM) and a certificate for it,
   * written as NAME.key and NAME.pem in the CA's directory, with `extensions`
   * (openssl config lines).
   */
  issue(name: string, subject: string, extensions: string[], keyType: TestKeyType, validity: Validity): Promise<IssuedCertFiles>;
  /** Marks the certificate in file `cert` revoked, now. */
  revoke(cert: string, reason: RevocationReason): Promise<Revocation>;
  /** The revocation of the certificate with this serial, as the database holds it; undefined while not revoked. */
  revocationOf(serial: string): Revocation | undefined;
  /** A new CRL (DER), issued now. */
  crl(): Promise<Buffer>;
  /** The response to a DER OCSP request, signed with `responder`'s key (a delegated responder, or the CA itself). */
  ocspResponse(request: Buffer, responder: CertFiles): Promise<Buffer>;
}

export interface DatabaseCaOptions {
  subject: string;
  keyType: TestKeyType;
  validity: Validity;
  /** Extensions of the CA's own certificate (openssl config lines). */
  extensions: string[];
  /** The CA that issues this one's certificate, as `name`; self-signed without. */
  issuer?: { ca: DatabaseCa; name: string };
  /** nextUpdate of CRLs and OCSP responses, from when they are made (default 24). */
  revocationValidityHours?: number;
}

/** Creates `dir` and a {@link DatabaseCa} in it. */
export async function createDatabaseCa(dir: string, options: DatabaseCaOptions): Promise<DatabaseCa> {
  mkdirSync(join(dir, "newcerts"), { recursive: true });
  const index = join(dir, "index.txt");
  const config = join(dir, "ca.cnf");
  writeFileSync(index, "");
  writeFileSync(join(dir, "crlnumber"), "1000\n");
  const hours = options.revocationValidityHours ?? 24;

  // openssl ca rewrites index.txt by renaming files, and -gencrl the CRL
  // number: one openssl run at a time on this database
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work);
    queue = next.catch(() => undefined);
    return next;
  };
  const sign = (name: string, extensions: string[], validity: Validity, selfSign: string[]) =>
    serially(async () => {
      writeFileSync(join(dir, `${name}.ext`), [...extensions, ""].join("\n"));
      await opensslAsync(
        [
          "ca", "-batch", "-config", config, "-notext", "-preserveDN", ...selfSign,
          "-in", `${name}.csr`, "-out", `${name}.pem`, "-extfile", `${name}.ext`,
          "-startdate", opensslTime(validity.notBefore), "-enddate", opensslTime(validity.notAfter),
        ],
        dir,
      );
      return serialOf(join(dir, `${name}.pem`));
    });
  const request = (name: string, subject: string, keyType: TestKeyType) =>
    opensslAsync(["req", "-new", ...newKeyArgs(keyType), "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject], dir);

  let ca: IssuedCertFiles;
  if (options.issuer) {
    ca = await options.issuer.ca.issue(options.issuer.name, options.subject, options.extensions, options.keyType, options.validity);
  } else {
    ca = { cert: join(dir, "ca.pem"), key: join(dir, "ca.key"), serial: "" };
  }
  writeFileSync(config, caConfig(dir, ca, hours));
  if (!options.issuer) {
    await request("ca", options.subject, options.keyType);
    ca.serial = await sign("ca", options.extensions, options.validity, ["-selfsign", "-keyfile", ca.key]);
  }

  const revocationOf = (serial: string) => readRevocation(index, serial);
  return {
    ca,
    index,
    async issue(name, subject, extensions, keyType, validity) {
      await request(name, subject, keyType);
      const serial = await sign(name, extensions, validity, []);
      return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`), serial };
    },
    async revoke(cert, reason) {
      await serially(() => opensslAsync(["ca", "-config", config, "-revoke", cert, "-crl_reason", reason], dir));
      return revocationOf(await serialOf(cert))!;
    },
    revocationOf,
    crl: () =>
      serially(async () => {
        const file = join(dir, `${randomUUID()}.crl`);
        try {
          await opensslAsync(["ca", "-config", config, "-gencrl", "-out", file], dir);
          return pemToDer(await readFile(file, "utf8"));
        } finally {
          await rm(file, { force: true });
        }
      }),
    ocspResponse: (ocspRequest, responder) =>
      serially(async () => {
        const base = join(dir, randomUUID());
        await writeFile(`${base}.req`, ocspRequest);
        try {
          await opensslAsync(
            [
              "ocsp", "-index", index, "-CA", ca.cert, "-rsigner", responder.cert, "-rkey", responder.key,
              "-nmin", String(hours * 60), "-reqin", `${base}.req`, "-respout", `${base}.resp`,
            ],
            dir,
          );
          return await readFile(`${base}.resp`);
        } finally {
          await rm(`${base}.req`, { force: true });
          await rm(`${base}.resp`, { force: true });
        }
      }),
  };
}

function caConfig(dir: string, ca: CertFiles, crlHours: number): string {
  return [
    "[ ca ]",
    "default_ca = ca_default",
    "[ ca_default ]",
    `database = ${join(dir, "index.txt")}`,
    `new_certs_dir = ${join(dir, "newcerts")}`,
    `certificate = ${ca.cert}`,
    `private_key = ${ca.key}`,
    "rand_serial = yes",
    `crlnumber = ${join(dir, "crlnumber")}`,
    `default_crl_hours = ${crlHours}`,
    "crl_extensions = crl_extensions",
    "default_md = sha256",
    "policy = policy_any",
    "unique_subject = no",
    "copy_extensions = none",
    "[ policy_any ]",
    "countryName = optional",
    "organizationName = optional",
    "organizationalUnitName = optional",
    "commonName = supplied",
    "[ crl_extensions ]",
    "authorityKeyIdentifier = keyid:always",
    "",
  ].join("\n");
}

/** YYYYMMDDHHMMSSZ, as `openssl ca -startdate` takes it. */
function opensslTime(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace(/[-T:]/g, "")}Z`;
}

async function serialOf(cert: string): Promise<string> {
  return new X509Certificate(await readFile(cert)).serialNumber.toUpperCase();
}

const sameSerial = (a: string, b: string) => a.replace(/^0+/, "").toUpperCase() === b.replace(/^0+/, "").toUpperCase();

/** An index.txt line: status, expiry, "revocation time[,reason]", serial, file name, subject. */
function readRevocation(index: string, serial: string): Revocation | undefined {
  for (const line of readFileSync(index, "utf8").split("\n")) {
    const [status, , revoked, lineSerial] = line.split("\t");
    if (status !== "R" || !lineSerial || !sameSerial(lineSerial, serial)) continue;
    const [time, reason] = revoked!.split(",");
    const [, year, month, day, hour, minute, second] = time!.match(/^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/)!;
    return {
      time: new Date(`20${year}-${month}-${day}T${hour}:${minute}:${second}Z`),
      reason: (reason ?? "unspecified") as RevocationReason,
    };
  }
  return undefined;
}

/** Each certificate of a PEM file, in order. */
export function pemCertificates(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
}

/** The DER inside a single-object PEM file. */
export function pemToDer(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----(BEGIN|END) [^-]+-----/g, "").replace(/\s+/g, ""), "base64");
}
