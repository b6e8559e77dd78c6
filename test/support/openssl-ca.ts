import { join } from "node:path";
import { openssl } from "./openssl.js";

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

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"];

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
