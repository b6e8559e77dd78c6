// Internal gRPC of a live embedded platform with mutual TLS: real grpc-js
// clients (the generated ts-proto ones) calling every service with no
// certificate, a certificate from another CA, and valid ones; each RPC without
// credentials, with a wrong, a revoked and a valid API key, the admin token,
// and the gateway's identity; then the certificates rotated on disk while a
// client is connected.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { credentials, Metadata, status, type ChannelCredentials, type Client, type ServiceError } from "@grpc/grpc-js";
import { ConversionServiceClient, OutputFormat, PdfaLevel, SourceFormat } from "../../gen/ts-proto/docservice/v1/conversion.js";
import { KeyServiceClient } from "../../gen/ts-proto/docservice/v1/keys.js";
import { AuditEventType, SigningServiceClient, SignRequest } from "../../gen/ts-proto/docservice/v1/signing.js";
import { CollectRequest, TelemetryServiceClient } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import { call } from "../support/key-flow.js";
import { createGrpcPki, type GrpcPki, type IssuedCertificate } from "../support/grpc-pki.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { issueKeyFromOutbox, startPlatform, type Platform } from "../support/platform.js";
import { freePort } from "../support/ports.js";
import { waitFor } from "../support/wait.js";

const ADMIN_TOKEN = "grpc-access-admin-token-0123456789";

type Callback = (error: ServiceError | null, response: any) => void;
type Unary = (request: unknown, metadata: Metadata, options: { deadline: Date }, callback: Callback) => void;

/** Calls a unary method; resolves with the response or the gRPC error. */
function ask(client: Client, method: string, request: unknown, metadata = new Metadata()): Promise<{ response?: any; error?: ServiceError }> {
  return new Promise((resolve) =>
    ((client as any)[method] as Unary).call(client, request, metadata, { deadline: new Date(Date.now() + 15_000) }, (error, response) =>
      resolve(error ? { error } : { response }),
    ),
  );
}

const bearer = (token: string) => {
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
};

const mtls = (ca: Buffer, identity?: IssuedCertificate): ChannelCredentials =>
  identity ? credentials.createSsl(ca, identity.key, identity.cert) : credentials.createSsl(ca);

describe("internal gRPC: mutual TLS and per-method caller rules", () => {
  let scratch: string;
  let pki: GrpcPki;
  let otherPki: GrpcPki;
  let platform: Platform;
  let address: string;
  let serverFiles: { cert: string; key: string; ca: string };
  let internalCaller: IssuedCertificate;
  let gatewayIdentity: IssuedCertificate;
  let pdf: Buffer;
  const clients: Client[] = [];

  function client<C extends Client>(Constructor: new (address: string, creds: ChannelCredentials) => C, creds: ChannelCredentials): C {
    const made = new Constructor(address, creds);
    clients.push(made);
    return made;
  }

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), "docservice-grpc-access-"));
    pki = createGrpcPki(join(scratch, "pki"), "Platform CA");
    otherPki = createGrpcPki(join(scratch, "other"), "Someone else's CA");
    const server = pki.issue("docservice-backend");
    serverFiles = { cert: join(scratch, "tls.crt"), key: join(scratch, "tls.key"), ca: join(scratch, "ca.crt") };
    copyFileSync(server.certFile, serverFiles.cert);
    copyFileSync(server.keyFile, serverFiles.key);
    copyFileSync(pki.caFile, serverFiles.ca);
    internalCaller = pki.issue("billing-service");
    gatewayIdentity = pki.issue("docservice-gateway");
    const grpcPort = await freePort();
    address = `localhost:${grpcPort}`;
    platform = await startPlatform({
      GRPC_PORT: String(grpcPort),
      GRPC_TLS_CERT_FILE: serverFiles.cert,
      GRPC_TLS_KEY_FILE: serverFiles.key,
      GRPC_TLS_CA_FILE: serverFiles.ca,
      GRPC_TLS_RELOAD_MS: "300",
      DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
      CONVERSION_POOL_SIZE: "1",
    });
    pdf = await textPdf(1);
  });

  after(async () => {
    for (const c of clients) c.close();
    await platform?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  const signRequest = () =>
    SignRequest.fromPartial({
      document: { content: pdf },
      signer: { email: "grpc@example.test", name: "Grace Rpc", ip: "203.0.113.9", userAgent: "grpc-js" },
      auditTrail: [{ type: AuditEventType.AUDIT_EVENT_TYPE_SUBMIT, timestamp: new Date() }],
      // Not the caller's: the service must take the caller from the key presented, not from here.
      callerKeyId: "someone-elses-key-id",
    });

  test("a client without a certificate, or with one from another CA, cannot complete the handshake", async () => {
    for (const creds of [mtls(pki.ca), mtls(pki.ca, otherPki.issue("docservice-gateway")), credentials.createInsecure()]) {
      const { error } = await ask(client(KeyServiceClient, creds), "register", { email: "x@example.test", clientIp: "" });
      assert.equal(error?.code, status.UNAVAILABLE, String(error?.details));
    }
  });

  test("SigningService.Sign and Verify: no key, a wrong key and a revoked key are refused; a valid key signs", async () => {
    const signing = client(SigningServiceClient, mtls(pki.ca, internalCaller));
    const apiKey = await issueKeyFromOutbox(platform, "signer@example.test");
    for (const method of ["sign", "verify"]) {
      const request = method === "sign" ? signRequest() : { document: { content: pdf } };
      assert.equal((await ask(signing, method, request)).error?.code, status.UNAUTHENTICATED, `${method} without a key`);
      assert.equal((await ask(signing, method, request, bearer(`dsk_${"x".repeat(38)}`))).error?.code, status.UNAUTHENTICATED, `${method} with a wrong key`);
    }
    const signed = await ask(signing, "sign", signRequest(), bearer(apiKey));
    assert.ifError(signed.error);
    assert.equal(signed.response.document.contentType, "application/pdf");
    const verified = await ask(signing, "verify", { document: { content: signed.response.document.content } }, bearer(apiKey));
    assert.ifError(verified.error);
    assert.equal(verified.response.valid, true);

    assert.equal((await call(platform.base, "/v1/auth/key", { apiKey, method: "DELETE" })).status, 200);
    await waitFor(async () => (await ask(signing, "sign", signRequest(), bearer(apiKey))).error?.code === status.UNAUTHENTICATED, {
      what: "the revoked key to be refused",
      timeoutMs: 15_000,
    });
  });

  test("the signature's eventId scope is the presented key, not the callerKeyId in the message", async () => {
    const signing = client(SigningServiceClient, mtls(pki.ca, internalCaller));
    const [first, second] = [await issueKeyFromOutbox(platform, "one@example.test"), await issueKeyFromOutbox(platform, "two@example.test")];
    const request = { ...signRequest(), eventId: "shared-event-id" };
    assert.ifError((await ask(signing, "sign", request, bearer(first))).error);
    // Were the message's callerKeyId trusted, both calls would share one scope and the changed request would be a 409.
    const other = await ask(signing, "sign", { ...request, signer: { ...request.signer!, name: "Someone Else" } }, bearer(second));
    assert.ifError(other.error);
  });

  test("ConversionService.Convert (a stream) needs an API key too", async () => {
    const conversion = client(ConversionServiceClient, mtls(pki.ca, internalCaller));
    const apiKey = await issueKeyFromOutbox(platform, "convert@example.test");
    const convert = (metadata: Metadata) =>
      new Promise<ServiceError | undefined>((resolve) => {
        const stream = conversion.convert(metadata, { deadline: new Date(Date.now() + 60_000) });
        stream.on("data", () => {});
        stream.on("error", resolve);
        stream.on("end", () => resolve(undefined));
        stream.write({ header: { sourceFormat: SourceFormat.SOURCE_FORMAT_TXT, filename: "a.txt", sizeBytes: 5, outputFormat: OutputFormat.OUTPUT_FORMAT_PDF, pdfa: PdfaLevel.PDFA_LEVEL_UNSPECIFIED, pdfua: false } });
        stream.write({ chunk: Buffer.from("hello") });
        stream.end();
      });
    assert.equal((await convert(new Metadata()))?.code, status.UNAUTHENTICATED);
    assert.equal((await convert(bearer(`dsk_${"y".repeat(38)}`)))?.code, status.UNAUTHENTICATED);
    assert.equal(await convert(bearer(apiKey)), undefined);
  });

  test("TelemetryService admin RPCs need the admin token", async () => {
    const telemetry = client(TelemetryServiceClient, mtls(pki.ca, internalCaller));
    assert.equal((await ask(telemetry, "listLicenseKeys", {})).error?.code, status.UNAUTHENTICATED);
    assert.equal((await ask(telemetry, "listLicenseKeys", {}, bearer("wrong-admin-token-0123456789"))).error?.code, status.UNAUTHENTICATED);
    assert.equal((await ask(telemetry, "addLicenseKey", { licenseKey: "", customer: "Mallory" })).error?.code, status.UNAUTHENTICATED);
    const added = await ask(telemetry, "addLicenseKey", { licenseKey: "", customer: "Acme" }, bearer(ADMIN_TOKEN));
    assert.ifError(added.error);
    assert.match(added.response.key.licenseKey, /^lic_/);
    // A caller that leaves the optional fields out (plain JavaScript, no fromPartial) gets a generated key, not "undefined".
    const unnamed = await ask(telemetry, "addLicenseKey", {}, bearer(ADMIN_TOKEN));
    assert.ifError(unnamed.error);
    assert.match(unnamed.response.key.licenseKey, /^lic_/);
    const listed = await ask(telemetry, "listLicenseKeys", {}, bearer(ADMIN_TOKEN));
    assert.deepEqual(listed.response.keys.map((k: { customer: string }) => k.customer).sort(), ["", "Acme"]);
    // Collect stays public: the license key in the message is its credential.
    const report = CollectRequest.fromPartial({ licenseKey: "community-and-eval-agplv3", libraryVersion: "1", events: [{ timestamp: new Date(), documentId: "HASH-00000001" }] });
    const collected = await ask(telemetry, "collect", report);
    assert.ifError(collected.error);
  });

  test("KeyService.Authenticate answers only the gateway's certificate", async () => {
    const apiKey = await issueKeyFromOutbox(platform, "auth@example.test");
    const asInternalService = await ask(client(KeyServiceClient, mtls(pki.ca, internalCaller)), "authenticate", { apiKey });
    assert.equal(asInternalService.error?.code, status.PERMISSION_DENIED);
    assert.equal(asInternalService.response, undefined);
    const asAdmin = await ask(client(KeyServiceClient, mtls(pki.ca, internalCaller)), "authenticate", { apiKey }, bearer(ADMIN_TOKEN));
    assert.equal(asAdmin.error?.code, status.PERMISSION_DENIED, "the admin token is not the gateway's identity");
    const asGateway = await ask(client(KeyServiceClient, mtls(pki.ca, gatewayIdentity)), "authenticate", { apiKey });
    assert.ifError(asGateway.error);
    assert.equal(asGateway.response.principal.email, "auth@example.test");
    const revokeByAddress = await ask(client(KeyServiceClient, mtls(pki.ca, internalCaller)), "revoke", { email: "auth@example.test" });
    assert.equal(revokeByAddress.error?.code, status.UNAUTHENTICATED);
  });

  test("certificates rotated on disk apply without a restart, while a connected client keeps working", async () => {
    const connected = client(KeyServiceClient, mtls(pki.ca, internalCaller));
    assert.ifError((await ask(connected, "register", { email: "rotate@example.test", clientIp: "" })).error);

    const rotated = createGrpcPki(join(scratch, "rotated"), "Rotated platform CA");
    const server = rotated.issue("docservice-backend");
    copyFileSync(rotated.caFile, serverFiles.ca);
    copyFileSync(server.keyFile, serverFiles.key);
    copyFileSync(server.certFile, serverFiles.cert);

    const onRotatedCa = rotated.issue("billing-service");
    await waitFor(async () => !(await ask(client(KeyServiceClient, mtls(rotated.ca, onRotatedCa)), "register", { email: "new@example.test", clientIp: "" })).error, {
      what: "a client of the new CA to be let in",
      timeoutMs: 10_000,
    });
    const oldCa = await ask(client(KeyServiceClient, mtls(pki.ca, pki.issue("billing-service"))), "register", { email: "old@example.test", clientIp: "" });
    assert.equal(oldCa.error?.code, status.UNAVAILABLE, "a new connection with the old CA's certificate is refused");
    const stillConnected = await ask(connected, "register", { email: "kept@example.test", clientIp: "" });
    assert.ifError(stillConnected.error);
  });
});
