import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openssl } from "./openssl.js";

export interface IssuedCertificate {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

export interface GrpcPki {
  caFile: string;
  ca: Buffer;
  /** A certificate the CA issued, for a server on loopback and as a client, named `commonName`. */
  issue(commonName: string): IssuedCertificate;
}

/** A throw-away CA made with openssl in `directory`, issuing EC P-256 certificates for internal gRPC. */
export function createGrpcPki(directory: string, caName: string): GrpcPki {
  mkdirSync(directory, { recursive: true });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    ["req", "-x509", ...ec, "-sha256", "-days", "2", "-keyout", "ca.key", "-out", "ca.pem", "-subj", `/O=DocService tests/CN=${caName}`,
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
    directory,
  );
  let serial = 0;
  return {
    caFile: join(directory, "ca.pem"),
    ca: readFileSync(join(directory, "ca.pem")),
    issue(commonName) {
      const name = `${commonName}-${++serial}`;
      openssl(["req", "-new", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/O=DocService tests/CN=${commonName}`], directory);
      writeFileSync(
        join(directory, `${name}.ext`),
        ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature", "extendedKeyUsage=serverAuth,clientAuth", "subjectAltName=DNS:localhost,IP:127.0.0.1"].join("\n"),
      );
      openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-sha256", "-extfile", `${name}.ext`, "-out", `${name}.pem`], directory);
      const certFile = join(directory, `${name}.pem`);
      const keyFile = join(directory, `${name}.key`);
      return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
    },
  };
}
