// AnnotationService.Annotate on every edge the platform serves it on: /v1/annotate,
// Connect and gRPC-Web through the gateway, and gRPC on a gRPC host. Each holds
// a request to the same limits (annotate-request-schema.ts) before any work, and
// an error that is the platform's fault is logged at error level with its
// request id, over Connect as over /v1. The real service, without LibreOffice:
// its converter fails as a converter should not, which is such an error.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { AnnotationService as AnnotationDescriptor } from "../../gen/es/docservice/v1/annotation_pb.js";
import { AnnotationServiceService, type AnnotateRequest, type AnnotateResponse } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { contractTemplate } from "../../test/support/docx-templates.js";
import { postJson } from "../../test/support/sign-requests.js";
import { credentialCheck } from "../access/admit.js";
import { InternalTransport } from "../access/internal-transport.js";
import { loadConfig } from "../configuration.js";
import { ServiceError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { MessageLimits } from "../core/message-limits.js";
import { startGateway, type RunningGateway } from "../gateway/gateway.js";
import { remoteApi } from "../grpc/grpc-client.js";
import { hostedUnary, startGrpcHost, type GrpcHost } from "../grpc/grpc-host.js";
import { ANNOTATE_LIMITS } from "./annotate-request-schema.js";
import { AnnotationService } from "./annotation-service.js";
import { annotationModule } from "./module.js";

const API_KEY = "dsk_annotate_edges";
const template = contractTemplate();
const signature = (signerName: string) => ({ id: "signature", type: "signature", signerName });

/** A gRPC client as an external caller is: no internal token, its API key in the metadata. */
class ApiKeyTransport extends InternalTransport {
  override callMetadata() {
    const metadata = super.callMetadata();
    metadata.set("authorization", `Bearer ${API_KEY}`);
    return metadata;
  }
}

describe("Annotate on /v1, Connect, gRPC-Web and gRPC", () => {
  const logLines: Array<Record<string, any>> = [];
  let gateway: RunningGateway;
  let host: GrpcHost;
  let grpc: { api: { annotate(request: AnnotateRequest): Promise<AnnotateResponse> }; close(): void };
  let base: string;

  before(async () => {
    const config = loadConfig({ DOCSERVICE_DATA_DIR: "/nonexistent" });
    const messages = MessageLimits.of(config);
    const service = new AnnotationService({
      // to=pdf reaches it: an error no code expected, as an INTERNAL is
      conversion: { convert: () => Promise.reject(new Error("the converter's socket closed unexpectedly")) },
      limits: { maxDocumentBytes: 1_000_000, maxUncompressedBytes: 10_000_000, maxZipEntries: 1000 },
      fetch: { timeoutMs: 1000, maxRedirects: 0, allowHosts: [] },
    });
    const keys = {
      authenticate: async ({ apiKey }: { apiKey: string }) => {
        if (apiKey !== API_KEY) throw new ServiceError("UNAUTHENTICATED", "The API key is malformed or revoked.");
        return { principal: { keyId: "k", email: "ada@example.test", displayPrefix: API_KEY.slice(0, 10), createdAt: new Date() } };
      },
    };
    const credentials = credentialCheck(undefined, keys);
    gateway = await startGateway({
      settings: { ...config, host: "127.0.0.1", port: 0 },
      logger: pino({ level: "info" }, { write: (line: string) => void logLines.push(JSON.parse(line)) }),
      credentials,
      routes: annotationModule.routes!(service, config, messages),
      backends: {},
      bridges: [{ ...annotationModule.service!, api: service }],
      messages,
    });
    base = `http://127.0.0.1:${gateway.port}`;
    const transport = new InternalTransport({ gatewayNames: [], internalToken: "annotate-edges-internal-token-0123456789" });
    host = await startGrpcHost(
      { host: "127.0.0.1", port: 0, transport, credentials, connections: config, messages, shutdownTimeoutMs: 1000 },
      [hostedUnary("docservice.v1.AnnotationService", AnnotationServiceService, service, async () => {})],
      createLogger("silent"),
    );
    grpc = remoteApi(AnnotationServiceService, {
      serviceName: "Annotation service",
      address: `127.0.0.1:${host.port}`,
      timeoutMs: 30_000,
      transport: new ApiKeyTransport({ gatewayNames: [], internalToken: undefined }),
    });
  });

  after(async () => {
    grpc?.close();
    await host?.shutdown();
    await gateway?.close();
  });

  /** A Connect call with a JSON body, as curl would make it: its HTTP status, body and request id. */
  async function connectCall(body: unknown, requestId?: string) {
    const response = await fetch(`${base}/docservice.v1.AnnotationService/Annotate`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${API_KEY}`, ...(requestId ? { "X-Request-Id": requestId } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { code: string; message: string }, requestId: response.headers.get("x-request-id") };
  }

  const grpcWeb = () => createClient(AnnotationDescriptor, createGrpcWebTransport({ baseUrl: base, httpVersion: "1.1" }));
  const document = { content: template.toString("base64") };

  /** What each edge answers the fields with: /v1's status and details, Connect's status and code, gRPC-Web's and gRPC's code and message. */
  async function everyEdge(connectFields: Array<Record<string, unknown>>, v1Fields: unknown[]) {
    const v1 = await postJson(base, "/v1/annotate", { document: { base64: template.toString("base64") }, fields: v1Fields }, API_KEY);
    const connect = await connectCall({ document, fields: connectFields });
    const web = await grpcWeb()
      .annotate({ document: { source: { case: "content", value: template } }, fields: connectFields }, { headers: { Authorization: `Bearer ${API_KEY}` } })
      .then(
        () => assert.fail("gRPC-Web filled the template"),
        (error: unknown) => ConnectError.from(error),
      );
    const native = await grpc.api
      .annotate({ document: { content: template }, fields: connectFields.map((f) => ({ ...emptyField, ...f })), toPdf: false })
      .then(
        () => assert.fail("gRPC filled the template"),
        (error: unknown) => error as ServiceError,
      );
    return { v1, connect, web, native };
  }

  test("1,001 fields: 400 / invalid_argument naming `fields` on every edge, before the template is read; 100,000 answered as fast", async () => {
    const over = ANNOTATE_LIMITS.maxFields + 1;
    const { v1, connect, web, native } = await everyEdge(
      Array.from({ length: over }, () => signature("Al")),
      Array.from({ length: over }, () => ({ id: "signature", type: "signature", options: { signerName: "Al" } })),
    );
    const issue = `fields: must have at most ${ANNOTATE_LIMITS.maxFields} fields`;
    assert.equal(v1.status, 400, JSON.stringify(v1.body));
    assert.deepEqual(v1.body.details, [{ field: "fields", issue: `must have at most ${ANNOTATE_LIMITS.maxFields} fields` }]);
    assert.equal(connect.status, 400, JSON.stringify(connect.body));
    assert.equal(connect.body.code, "invalid_argument");
    assert.match(connect.body.message, new RegExp(issue));
    assert.equal(web.code, Code.InvalidArgument);
    assert.match(web.rawMessage, new RegExp(issue));
    assert.equal(native.code, "VALIDATION_ERROR", String(native));
    assert.deepEqual(native.details?.map((d) => d.field), ["fields"]);

    // the audit's request: 100,000 signature fields (5.5 MB) held the main thread for minutes and took 12.7 GB
    const started = performance.now();
    const flood = await connectCall({ document, fields: Array.from({ length: 100_000 }, () => signature("Al")) });
    assert.equal(flood.status, 400);
    assert.match(flood.body.message, new RegExp(issue));
    assert.ok(performance.now() - started < 10_000, `${Math.round(performance.now() - started)} ms`);
  });

  test("a 20,000-character signerName: 400 / invalid_argument naming it on every edge; one of 200 characters is drawn", async () => {
    const name = "Al".repeat(10_000);
    const { v1, connect, web, native } = await everyEdge([signature(name)], [{ id: "signature", type: "signature", options: { signerName: name } }]);
    const field = "fields[0].options.signerName";
    assert.equal(v1.status, 400, JSON.stringify(v1.body));
    assert.deepEqual(v1.body.details, [{ field, issue: `must be at most ${ANNOTATE_LIMITS.maxLabelChars} characters` }]);
    assert.equal(connect.status, 400, JSON.stringify(connect.body));
    assert.equal(connect.body.code, "invalid_argument");
    assert.ok(connect.body.message.includes(field), connect.body.message);
    assert.equal(web.code, Code.InvalidArgument);
    assert.ok(web.rawMessage.includes(field), web.rawMessage);
    assert.equal(native.code, "VALIDATION_ERROR", String(native));
    assert.deepEqual(native.details?.map((d) => d.field), [field]);

    const longest = await connectCall({ document, fields: [signature("\uFDFD".repeat(ANNOTATE_LIMITS.maxLabelChars))] });
    assert.equal(longest.status, 200, JSON.stringify(longest.body));
  });

  test("an error that is the platform's fault is logged at error level with its request id, over Connect as over /v1; a caller's mistake is not", async () => {
    const failed = await connectCall({ document, fields: [signature("Al")], toPdf: true }, "connect-fault-1");
    assert.equal(failed.status, 500);
    assert.deepEqual(failed.body, { code: "internal", message: "An unexpected error occurred." });
    assert.equal(failed.requestId, "connect-fault-1");
    const v1 = await postJson(base, "/v1/annotate?to=pdf", { document: { base64: template.toString("base64") }, fields: [{ id: "customer", type: "text", value: "Ada" }] }, API_KEY);
    assert.equal(v1.status, 500);
    const refused = await connectCall({ document, fields: [signature("x".repeat(201))] }, "connect-mistake-1");
    assert.equal(refused.status, 400);
    await new Promise((resolve) => setImmediate(resolve));

    const errors = logLines.filter((line) => line.level >= 50);
    const connectLine = errors.find((line) => line.requestId === "connect-fault-1");
    assert.ok(connectLine, `no error line for the Connect request: ${JSON.stringify(errors)}`);
    assert.equal(connectLine.msg, "request failed");
    assert.equal(connectLine.rpc, "docservice.v1.AnnotationService/Annotate");
    assert.equal(connectLine.err.message, "the converter's socket closed unexpectedly");
    assert.ok(errors.some((line) => line.requestId === v1.body.requestId && line.msg === "request failed"), "the /v1 request's error line");
    assert.ok(!errors.some((line) => line.requestId === "connect-mistake-1"), "a 400 is logged as an error");
  });
});

const emptyField = { id: "", group: "", type: "", value: "", rows: [], keepTextNodeStyles: false, copyRowStyle: false, width: 0, height: 0, signerName: "", topLabel: "", bottomLabel: "" };
