import { mkdirSync, readFileSync } from "node:fs";
import { createOpensslCa } from "./openssl-ca.js";

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
  const { ca, issue } = createOpensslCa(directory, `/O=DocService tests/CN=${caName}`);
  let serial = 0;
  return {
    caFile: ca.cert,
    ca: readFileSync(ca.cert),
    issue(commonName) {
      const issued = issue(`${commonName}-${++serial}`, `/O=DocService tests/CN=${commonName}`, [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature",
        "extendedKeyUsage=serverAuth,clientAuth",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
      ]);
      return { certFile: issued.cert, keyFile: issued.key, cert: readFileSync(issued.cert), key: readFileSync(issued.key) };
    },
  };
}
