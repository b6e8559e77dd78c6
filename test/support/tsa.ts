/**
 * A local RFC 3161 time-stamping authority for the signing tests: OpenSSL's
 * `openssl ts -reply` behind a loopback HTTP server. It has its own throw-away
 * PKI (a TSA root CA and a TSA certificate with the critical extendedKeyUsage
 * timeStamping that RFC 3161 2.3 requires) in a temporary directory, or signs
 * with a given certificate (e.g. test-pki.ts's), and can be told to misbehave
 * for the client's failure tests. Not a test file itself.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pemCertificates, type CertFiles } from "./openssl-ca.js";
import { newKeyArgs, openssl } from "./openssl.js";
import { tool } from "./pdf-tools.js";

/** How the TSA answers instead of (or before) a good reply; all unset: a good reply. */
export interface TsaMisbehaviour {
  /** Wait this long before answering. */
  delayMs?: number;
  /** Answer with this HTTP status and an empty body. */
  httpStatus?: number;
  /** Send this Content-Type instead of application/timestamp-reply. */
  contentType?: string;
  /** Send these bytes instead of a reply. */
  body?: Buffer;
  /**
   * Send the previous granted reply again (a replay): its nonce does not
   * match, and its imprint only if the same signature value was asked for.
   */
  replay?: boolean;
  /** End the connection without answering, for this many requests (then answer as the rest says). */
  hangUps?: number;
  /** Refuse the request: OpenSSL replies PKIStatus rejection (badAlg) from a config that accepts only SHA-512. */
  reject?: boolean;
}

export interface TestTsa {
  /** http://127.0.0.1:PORT/tsa */
  url: string;
  /** The TSA root CA, the trust anchor for its tokens. */
  caCertificatePem: string;
  caCertificatePath: string;
  /** The TSA's own (end-entity) certificate. */
  tsaCertificatePath: string;
  /** Number of requests answered so far (misbehaving ones included). */
  readonly requests: number;
  /** Sets how the following requests are answered (undefined: properly again). */
  misbehave(misbehaviour: TsaMisbehaviour | undefined): void;
  stop(): Promise<void>;
}

/** The TSA's certificate (critical extendedKeyUsage timeStamping) and key, and the PEM chain above it: issuer first, the root last. */
export interface TsaSigner extends CertFiles {
  chain: string;
}

export interface TestTsaOptions {
  /** Sign with this instead of a PKI of the TSA's own; the chain's root is then `caCertificatePath`. */
  signer?: TsaSigner;
}

const POLICY_OID = "1.3.6.1.4.1.99999.3161.1";

/** Starts a TSA on a free loopback port; stop() closes it and removes its directory. */
export async function startTestTsa(options: TestTsaOptions = {}): Promise<TestTsa> {
  const given = options.signer;
  const root = given && pemCertificates(readFileSync(given.chain, "utf8")).at(-1);
  if (given && !root) throw new Error(`${given.chain} holds no PEM certificate`);
  const directory = mkdtempSync(join(tmpdir(), "docservice-test-tsa-"));
  const caCertificatePath = join(directory, "ca.pem");
  if (root) writeFileSync(caCertificatePath, `${root}\n`);
  else createTsaPki(directory);
  const signer = given ?? { cert: join(directory, "tsa.pem"), key: join(directory, "tsa.key"), chain: caCertificatePath };
  const configPath = join(directory, "tsa.cnf");
  writeFileSync(configPath, tsaConfig(directory, signer));

  let misbehaviour: TsaMisbehaviour = {};
  let previousReply: Buffer | undefined;
  let requests = 0;
  // `openssl ts -reply` reads and rewrites the serial file: one at a time
  let queue: Promise<unknown> = Promise.resolve();
  // ends delayed answers when the TSA stops
  const stopping = new AbortController();

  const reply = async (query: Buffer, section: string): Promise<Buffer> => {
    const base = join(directory, randomUUID());
    await writeFile(`${base}.tsq`, query);
    try {
      const result = await tool("openssl", [
        "ts", "-reply", "-config", configPath, "-section", section,
        "-queryfile", `${base}.tsq`, "-out", `${base}.tsr`,
      ]);
      if (result.code !== 0) throw new Error(`openssl ts -reply exited ${result.code}: ${result.stderr}`);
      return await readFile(`${base}.tsr`);
    } finally {
      await rm(`${base}.tsq`, { force: true });
      await rm(`${base}.tsr`, { force: true });
    }
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    requests++;
    const current = misbehaviour;
    if (current.hangUps) {
      current.hangUps--;
      request.socket.destroy();
      return;
    }
    if (current.delayMs) await sleep(current.delayMs, undefined, { signal: stopping.signal });
    if (current.httpStatus) {
      response.writeHead(current.httpStatus).end();
      return;
    }
    if (request.method !== "POST" || request.headers["content-type"] !== "application/timestamp-query") {
      response.writeHead(400, { "Content-Type": "text/plain" }).end("expected a POST of application/timestamp-query\n");
      return;
    }
    let body = current.body;
    if (!body && current.replay && previousReply) body = previousReply;
    if (!body) {
      const section = current.reject ? "tsa_sha512_only" : "tsa_default";
      const next = queue.then(() => reply(Buffer.concat(chunks), section));
      queue = next.catch(() => undefined);
      body = await next;
      if (!current.reject) previousReply = body;
    }
    response.writeHead(200, { "Content-Type": current.contentType ?? "application/timestamp-reply" }).end(body);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.destroyed) return;
      if (!response.headersSent) response.writeHead(500, { "Content-Type": "text/plain" });
      response.end(`${(error as Error).message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}/tsa`,
    caCertificatePem: readFileSync(caCertificatePath, "utf8"),
    caCertificatePath,
    tsaCertificatePath: signer.cert,
    get requests() {
      return requests;
    },
    misbehave(next) {
      misbehaviour = next ?? {};
    },
    async stop() {
      stopping.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** ca.key/ca.pem (root CA) and tsa.key/tsa.pem (the TSA's certificate) in `directory`. */
function createTsaPki(directory: string): void {
  const ecKey = [...newKeyArgs("ec"), "-nodes"];
  openssl(
    [
      "req", "-x509", ...ecKey, "-sha256", "-days", "30", "-keyout", "ca.key", "-out", "ca.pem",
      "-subj", "/O=DocService tests/CN=Test TSA root CA",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    ],
    directory,
  );
  openssl(["req", "-new", ...ecKey, "-keyout", "tsa.key", "-out", "tsa.csr", "-subj", "/O=DocService tests/CN=Test TSA"], directory);
  writeFileSync(
    join(directory, "tsa.ext"),
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n" +
      "extendedKeyUsage=critical,timeStamping\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n",
  );
  openssl(
    [
      "x509", "-req", "-in", "tsa.csr", "-sha256", "-days", "30", "-CA", "ca.pem", "-CAkey", "ca.key",
      "-CAcreateserial", "-extfile", "tsa.ext", "-out", "tsa.pem",
    ],
    directory,
  );
}

/**
 * The `openssl ts` configuration: section tsa_default answers SHA-256 (and
 * longer) imprints and puts the TSA certificate and its chain into the token;
 * tsa_sha512_only is the same TSA refusing everything but SHA-512, for a
 * PKIStatus rejection.
 */
function tsaConfig(directory: string, signer: TsaSigner): string {
  const common = [
    `serial = ${join(directory, "tsa-serial")}`,
    "crypto_device = builtin",
    `signer_cert = ${signer.cert}`,
    `certs = ${signer.chain}`,
    `signer_key = ${signer.key}`,
    "signer_digest = sha256",
    `default_policy = ${POLICY_OID}`,
    "accuracy = secs:1",
    "ordering = no",
    "tsa_name = yes",
    "ess_cert_id_chain = no",
    "ess_cert_id_alg = sha256",
  ];
  return [
    "[ tsa ]",
    "default_tsa = tsa_default",
    "",
    "[ tsa_default ]",
    ...common,
    "digests = sha256, sha384, sha512",
    "",
    "[ tsa_sha512_only ]",
    ...common,
    "digests = sha512",
    "",
  ].join("\n");
}
