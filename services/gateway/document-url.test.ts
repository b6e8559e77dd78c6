// document.url is held to one length (fetch/url-length.ts) before anything is done with it, on /v1 and on Connect
// alike, and no error message repeats more than a short start of it. The signing service here is the real one over
// stand-ins that are never reached: a URL is refused before the document is fetched, let alone signed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { credentialCheck } from "../access/admit.js";
import { loadConfig } from "../configuration.js";
import { ServiceError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { MessageLimits } from "../core/message-limits.js";
import { MAX_URL_CHARS, URL_TOO_LONG } from "../fetch/url-length.js";
import { signingModule } from "../signing/module.js";
import { SigningService, type SigningServiceDeps } from "../signing/signing-service.js";
import { AUDIT_TRAIL, SIGNER } from "../../test/support/sign-requests.js";
import { startGateway, type RunningGateway } from "./gateway.js";

const API_KEY = "dsk_document_url";
/** Every part of the service past the document's fetch: reaching one is the failure. */
const unreachable = new Proxy({}, { get: (_, name) => () => Promise.reject(new Error(`reached ${String(name)}`)) });

describe("document.url: one length limit on /v1 and Connect, and messages that repeat only its start", () => {
  let gateway: RunningGateway;
  let base: string;

  before(async () => {
    const config = loadConfig({ DOCSERVICE_DATA_DIR: "/nonexistent" });
    const messages = MessageLimits.of(config);
    const signing = new SigningService({
      key: unreachable,
      workers: unreachable,
      ledger: unreachable,
      conversion: unreachable,
      health: async () => ({ status: "ok" }),
      settings: { maxDocumentBytes: 1024 * 1024, metadataMaxBytes: 1024, replayTtlMs: 60_000, defaultLevel: "B-B", fetch: { timeoutMs: 5000, maxRedirects: 3, allowHosts: [] } },
    } as unknown as SigningServiceDeps);
    const keys = {
      authenticate: async ({ apiKey }: { apiKey: string }) => {
        if (apiKey !== API_KEY) throw new ServiceError("UNAUTHENTICATED", "The API key is malformed or revoked.");
        return { principal: { keyId: "0".repeat(64), email: "ada@example.test", displayPrefix: API_KEY.slice(0, 10), createdAt: new Date() } };
      },
    };
    gateway = await startGateway({
      settings: { ...config, host: "127.0.0.1", port: 0, shutdownTimeoutMs: 1000 },
      logger: createLogger("silent"),
      credentials: credentialCheck(undefined, keys),
      routes: signingModule.routes!(signing, config, messages),
      backends: {},
      bridges: [{ ...signingModule.service!, api: signing }],
      messages,
    });
    base = `http://127.0.0.1:${gateway.port}`;
  });

  after(() => gateway?.close());

  const post = async (path: string, body: unknown, contentType = "application/json") => {
    const response = await fetch(`${base}${path}`, { method: "POST", headers: { "Content-Type": contentType, Authorization: `Bearer ${API_KEY}` }, body: JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) };
  };

  const tooLong = `https://example.invalid/${"a".repeat(10_000 - 24)}`;

  test(`a ${tooLong.length}-character document.url is a 400 naming it, on every /v1 route that takes one`, async () => {
    for (const [path, body] of [
      ["/v1/verify", { document: { url: tooLong } }],
      ["/v1/timestamp", { document: { url: tooLong } }],
      ["/v1/sign", { document: { url: tooLong }, signer: SIGNER, auditTrail: AUDIT_TRAIL }],
    ] as const) {
      const answer = await post(path, body);
      assert.equal(answer.status, 400, `${path}: ${answer.text.slice(0, 300)}`);
      assert.equal(answer.body.code, "VALIDATION_ERROR");
      assert.deepEqual(answer.body.details, [{ field: "document.url", issue: URL_TOO_LONG }], path);
      assert.ok(answer.text.length < 1000, `${path}: an answer of ${answer.text.length} bytes`);
    }
  });

  test("the same on Connect (invalid_argument, HTTP 400), for Sign and Verify", async () => {
    for (const [method, message] of [
      ["Verify", { document: { url: tooLong } }],
      ["Sign", { document: { url: tooLong }, signer: { email: SIGNER.email, name: SIGNER.name }, auditTrail: AUDIT_TRAIL.map((event) => ({ ...event, type: `AUDIT_EVENT_TYPE_${event.type.toUpperCase()}` })) }],
    ] as const) {
      const answer = await post(`/docservice.v1.SigningService/${method}`, message);
      assert.equal(answer.status, 400, `${method}: ${answer.text.slice(0, 300)}`);
      assert.equal(answer.body.code, "invalid_argument", method);
      assert.equal(answer.body.message, `Invalid request: document.url: ${URL_TOO_LONG}`, method);
    }
  });

  test("a URL at the limit is taken, and the message about its host repeats only the host's start", async () => {
    const host = "a".repeat(MAX_URL_CHARS - "http:///".length);
    const url = `http://${host}/`;
    assert.equal(url.length, MAX_URL_CHARS);
    for (const [answer, status] of [
      [await post("/v1/verify", { document: { url } }), 422],
      // Connect's failed_precondition
      [await post("/docservice.v1.SigningService/Verify", { document: { url } }), 400],
    ] as const) {
      assert.equal(answer.status, status, answer.text.slice(0, 300));
      assert.match(answer.body.message, /host \(a{64}…\) could not be resolved/);
      assert.ok(answer.text.length < 1000, `an answer of ${answer.text.length} bytes`);
    }
  });
});
