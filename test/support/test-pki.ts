/**
 * A PKI for the long-term-validation signing tests (PAdES B-LT, B-LTA), made
 * with openssl in a temporary directory and served on loopback: a root CA, an
 * intermediate CA, and end entities issued by the intermediate (two signers,
 * a revoked signer, a TSA). Every issued certificate names, in its AIA and CRL
 * distribution point extensions, where its issuer's certificate (caIssuers),
 * OCSP responder and CRL are; all three are HTTP servers of this module. OCSP
 * responses come from `openssl ocsp` run per request on the CA's database,
 * signed by a delegated responder of that CA (OCSPSigning, id-pkix-ocsp-nocheck);
 * CRLs from `openssl ca -gencrl` per request. Not a test file itself.
 */
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDatabaseCa, type DatabaseCa, type IssuedCertFiles, type Revocation, type RevocationReason, type Validity } from "./openssl-ca.js";
import type { TestKeyType } from "./openssl.js";

export type TestPkiCaName = "root" | "intermediate";
export type TestPkiName = TestPkiCaName | "rootOcsp" | "intermediateOcsp" | "signerA" | "signerB" | "revoked" | "tsa";
export type RevocationService = "ocsp" | "crl";

export interface TestPkiCertificate {
  /** Unencrypted PKCS#8 PEM. */
  key: string;
  /** PEM. */
  cert: string;
  certDer: string;
  /** PEM: the certificates above this one, issuer first, the root last (an empty file for the root). */
  chain: string;
  /** Upper-case hex. */
  serial: string;
}

export interface TestPkiOptions {
  /** Key type of each certificate (default "ec": EC P-256; "rsa": RSA-2048). */
  keyTypes?: Partial<Record<TestPkiName, TestKeyType>>;
}

export interface TestPki extends Record<TestPkiName, TestPkiCertificate> {
  /** The temporary directory holding everything. */
  dir: string;
  /** Where each CA's certificate (DER), OCSP responder and CRL (DER) are; what the certificates it issues name. */
  urls: Record<"caIssuers" | "ocsp" | "crl", Record<TestPkiCaName, string>>;
  /** HTTP requests answered so far, per server. */
  readonly requests: Record<"caIssuers" | RevocationService, number>;
  /** The certificate's revocation as its CA's database holds it; undefined while not revoked. `revoked` is revoked (keyCompromise) at start. */
  revocationOf(name: TestPkiName): Revocation | undefined;
  /** Revokes a certificate now; its CA's CRLs and OCSP responses show it from then on. */
  revoke(name: TestPkiName, reason?: RevocationReason): Promise<Revocation>;
  /** Closes the OCSP and CRL servers (default both): connections to them are refused until started again. */
  stopRevocationServices(services?: RevocationService[]): Promise<void>;
  /** Opens them again, on the same ports. */
  startRevocationServices(services?: RevocationService[]): Promise<void>;
  /** Closes every server and removes the directory. */
  stop(): Promise<void>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const CA_KEY_USAGE = "keyUsage=critical,keyCertSign,cRLSign";
const SIGNER_EXTENSIONS = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature,nonRepudiation"];
const OCSP_RESPONDER_EXTENSIONS = [
  "basicConstraints=critical,CA:FALSE",
  "keyUsage=critical,digitalSignature",
  "extendedKeyUsage=OCSPSigning",
  "noCheck=ignored",
];
const TSA_EXTENSIONS = [
  "basicConstraints=critical,CA:FALSE",
  "keyUsage=critical,digitalSignature,nonRepudiation",
  "extendedKeyUsage=critical,timeStamping",
];

/**
 * Starts the servers on free loopback ports, then makes the PKI (certificates
 * valid from an hour ago: CAs for 7 days, end entities for 3; CRLs and OCSP
 * responses have a nextUpdate a day after they are made).
 */
export async function startTestPki(options: TestPkiOptions = {}): Promise<TestPki> {
  const dir = mkdtempSync(join(tmpdir(), "docservice-test-pki-"));
  const keyType = (name: TestPkiName) => options.keyTypes?.[name] ?? "ec";
  const cas = {} as Record<TestPkiCaName, DatabaseCa>;
  const responders = {} as Record<TestPkiCaName, IssuedCertFiles>;
  const caDer = {} as Record<TestPkiCaName, Buffer>;
  const caIn = (path: string, pattern: RegExp) => path.match(pattern)?.[1] as TestPkiCaName | undefined;

  const servers = {
    caIssuers: await startLoopbackServer(async ({ path }) => {
      const ca = caIn(path, /^\/(root|intermediate)\.cer$/);
      return ca && { type: "application/pkix-cert", body: caDer[ca] };
    }),
    crl: await startLoopbackServer(async ({ path }) => {
      const ca = caIn(path, /^\/(root|intermediate)\.crl$/);
      return ca && { type: "application/pkix-crl", body: await cas[ca].crl() };
    }),
    // RFC 6960 A.1: a POST of the DER request to the URL, or a GET of URL/base64(request)
    ocsp: await startLoopbackServer(async ({ method, path, body }) => {
      const ca = caIn(path, /^\/(root|intermediate)(\/|$)/);
      const encoded = path.match(/^\/\w+\/(.+)$/)?.[1];
      const ocspRequest =
        method === "POST" && encoded === undefined ? body
        : method === "GET" && encoded !== undefined ? Buffer.from(decodeURIComponent(encoded), "base64")
        : undefined;
      if (!ca || !ocspRequest) return undefined;
      return { type: "application/ocsp-response", body: await cas[ca].ocspResponse(ocspRequest, responders[ca]) };
    }),
  };
  const stopServers = async (names: (keyof typeof servers)[]) => {
    await Promise.all(names.map((name) => servers[name].stop()));
  };

  try {
    const urls: TestPki["urls"] = { caIssuers: { root: "", intermediate: "" }, ocsp: { root: "", intermediate: "" }, crl: { root: "", intermediate: "" } };
    for (const name of ["root", "intermediate"] as const) {
      urls.caIssuers[name] = servers.caIssuers.url(`/${name}.cer`);
      urls.ocsp[name] = servers.ocsp.url(`/${name}`);
      urls.crl[name] = servers.crl.url(`/${name}.crl`);
    }
    const issuedBy = (ca: TestPkiCaName, { ocsp }: { ocsp: boolean }) => [
      "subjectKeyIdentifier=hash",
      "authorityKeyIdentifier=keyid",
      // asking a responder about its own certificate would go round in circles: ocsp-nocheck instead
      `authorityInfoAccess=caIssuers;URI:${urls.caIssuers[ca]}${ocsp ? `,OCSP;URI:${urls.ocsp[ca]}` : ""}`,
      `crlDistributionPoints=URI:${urls.crl[ca]}`,
    ];
    const now = Date.now();
    const caValidity: Validity = { notBefore: new Date(now - HOUR), notAfter: new Date(now + 7 * DAY) };
    const validity: Validity = { notBefore: new Date(now - HOUR), notAfter: new Date(now + 3 * DAY) };
    const subject = (commonName: string) => `/O=DocService tests/CN=${commonName}`;

    cas.root = await createDatabaseCa(join(dir, "root"), {
      subject: subject("DocService test root CA"),
      keyType: keyType("root"),
      validity: caValidity,
      extensions: ["basicConstraints=critical,CA:TRUE", CA_KEY_USAGE, "subjectKeyIdentifier=hash"],
    });
    [cas.intermediate, responders.root] = await Promise.all([
      createDatabaseCa(join(dir, "intermediate"), {
        subject: subject("DocService test intermediate CA"),
        keyType: keyType("intermediate"),
        validity: caValidity,
        extensions: ["basicConstraints=critical,CA:TRUE,pathlen:0", CA_KEY_USAGE, ...issuedBy("root", { ocsp: true })],
        issuer: { ca: cas.root, name: "intermediate" },
      }),
      cas.root.issue(
        "rootOcsp",
        subject("DocService test root OCSP responder"),
        [...OCSP_RESPONDER_EXTENSIONS, ...issuedBy("root", { ocsp: false })],
        keyType("rootOcsp"),
        validity,
      ),
    ]);
    const issue = (name: TestPkiName, commonName: string, extensions: string[], { ocsp }: { ocsp: boolean }) =>
      cas.intermediate.issue(name, subject(commonName), [...extensions, ...issuedBy("intermediate", { ocsp })], keyType(name), validity);
    const [intermediateOcsp, signerA, signerB, revoked, tsa] = await Promise.all([
      issue("intermediateOcsp", "DocService test intermediate OCSP responder", OCSP_RESPONDER_EXTENSIONS, { ocsp: false }),
      issue("signerA", "DocService test signer A", SIGNER_EXTENSIONS, { ocsp: true }),
      issue("signerB", "DocService test signer B", SIGNER_EXTENSIONS, { ocsp: true }),
      issue("revoked", "DocService test revoked signer", SIGNER_EXTENSIONS, { ocsp: true }),
      issue("tsa", "DocService test TSA", TSA_EXTENSIONS, { ocsp: true }),
    ]);
    responders.intermediate = intermediateOcsp;
    await cas.intermediate.revoke(revoked.cert, "keyCompromise");

    const issuers: Record<TestPkiName, TestPkiCaName> = {
      root: "root",
      intermediate: "root",
      rootOcsp: "root",
      intermediateOcsp: "intermediate",
      signerA: "intermediate",
      signerB: "intermediate",
      revoked: "intermediate",
      tsa: "intermediate",
    };
    const chains: Record<TestPkiCaName, string> = { root: join(dir, "root-chain.pem"), intermediate: join(dir, "intermediate-chain.pem") };
    const rootPem = readFileSync(cas.root.ca.cert, "utf8");
    writeFileSync(join(dir, "empty-chain.pem"), "");
    writeFileSync(chains.root, rootPem);
    writeFileSync(chains.intermediate, readFileSync(cas.intermediate.ca.cert, "utf8") + rootPem);

    const files: Record<TestPkiName, IssuedCertFiles> = {
      root: cas.root.ca,
      intermediate: cas.intermediate.ca,
      rootOcsp: responders.root,
      intermediateOcsp,
      signerA,
      signerB,
      revoked,
      tsa,
    };
    const certificates = {} as Record<TestPkiName, TestPkiCertificate>;
    for (const [name, issued] of Object.entries(files) as [TestPkiName, IssuedCertFiles][]) {
      const certDer = issued.cert.replace(/\.pem$/, ".der");
      writeFileSync(certDer, new X509Certificate(readFileSync(issued.cert)).raw);
      const chain = name === "root" ? join(dir, "empty-chain.pem") : chains[issuers[name]];
      certificates[name] = { key: issued.key, cert: issued.cert, certDer, chain, serial: issued.serial };
    }
    caDer.root = readFileSync(certificates.root.certDer);
    caDer.intermediate = readFileSync(certificates.intermediate.certDer);

    const revocationServices: RevocationService[] = ["ocsp", "crl"];
    return {
      ...certificates,
      dir,
      urls,
      get requests() {
        return { caIssuers: servers.caIssuers.requests, ocsp: servers.ocsp.requests, crl: servers.crl.requests };
      },
      revocationOf: (name) => cas[issuers[name]].revocationOf(certificates[name].serial),
      revoke: (name, reason = "unspecified") => cas[issuers[name]].revoke(certificates[name].cert, reason),
      stopRevocationServices: (services = revocationServices) => stopServers(services),
      async startRevocationServices(services = revocationServices) {
        await Promise.all(services.map((name) => servers[name].start()));
      },
      async stop() {
        await stopServers(["caIssuers", "ocsp", "crl"]);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopServers(["caIssuers", "ocsp", "crl"]);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

interface LoopbackRequest {
  method: string;
  /** Without the query. */
  path: string;
  body: Buffer;
}

/** What to answer with 200; undefined: 404. */
type Route = (request: LoopbackRequest) => Promise<{ type: string; body: Buffer } | undefined>;

interface LoopbackServer {
  url(path: string): string;
  readonly requests: number;
  /** Listens again on the port it had; a no-op while listening. */
  start(): Promise<void>;
  /** Closes the port and every open connection; a no-op while closed. */
  stop(): Promise<void>;
}

async function startLoopbackServer(route: Route): Promise<LoopbackServer> {
  let requests = 0;
  let server: Server | undefined;
  let port = 0;

  const answer = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
    return route({ method: request.method ?? "GET", path, body: Buffer.concat(chunks) });
  };
  const start = async () => {
    if (server) return;
    const next = createServer((request, response) => {
      requests++;
      answer(request).then(
        (found) => {
          if (found) response.writeHead(200, { "Content-Type": found.type }).end(found.body);
          else response.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
        },
        (error: unknown) => {
          if (!response.headersSent) response.writeHead(500, { "Content-Type": "text/plain" });
          response.end(`${(error as Error).message}\n`);
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      next.once("error", reject);
      next.listen(port, "127.0.0.1", resolve);
    });
    const address = next.address();
    port = typeof address === "object" && address ? address.port : port;
    server = next;
  };
  await start();
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    get requests() {
      return requests;
    },
    start,
    async stop() {
      const current = server;
      if (!current) return;
      server = undefined;
      current.closeAllConnections();
      await new Promise<void>((resolve) => current.close(() => resolve()));
    },
  };
}
