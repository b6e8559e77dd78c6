import assert from "node:assert/strict";
import { credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { after, before, describe, test } from "node:test";
import {
  KeyServiceClient,
  type AuthenticateResponse,
  type GetKeyInfoResponse,
  type KeyServiceVerifyResponse,
  type RegisterResponse,
  type RevokeResponse,
} from "../../gen/ts-proto/docservice/v1/keys.js";
import { INTERNAL_TOKEN_HEADER } from "../../services/access/internal-transport.js";
import { remoteHealthCheck } from "../../services/grpc/grpc-health-client.js";
import { codeIn } from "../support/key-flow.js";
import { startMailpit, type Mailpit } from "../support/mailpit.js";
import { freePort } from "../support/ports.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { plaintextTransport, startService, TEST_INTERNAL_TOKEN, type ServiceProcess } from "../support/service-process.js";

const ADMIN_TOKEN = "grpc-client-test-admin-token";
/** Authenticate answers only the gateway: here, the internal token of a deployment without TLS. */
const asGateway = () => withHeader(INTERNAL_TOKEN_HEADER, TEST_INTERNAL_TOKEN);
const asAdmin = () => withHeader("authorization", `Bearer ${ADMIN_TOKEN}`);

function withHeader(name: string, value: string): Metadata {
  const metadata = new Metadata();
  metadata.set(name, value);
  return metadata;
}

// An internal service calling KeyService directly with the generated ts-proto grpc-js client.
describe("KeyService over gRPC with the ts-proto client", () => {
  let redis: RedisServer;
  let mailpit: Mailpit;
  let keys: ServiceProcess;
  let client: KeyServiceClient;

  before(async () => {
    [redis, mailpit] = await Promise.all([startRedis(), startMailpit()]);
    const address = `127.0.0.1:${await freePort()}`;
    const healthy = remoteHealthCheck(address, "docservice.v1.KeyService", 1000, plaintextTransport);
    keys = await startService(
      "keys",
      {
        HOST: "127.0.0.1",
        GRPC_PORT: address.split(":")[1],
        REDIS_URL: redis.url,
        SMTP_HOST: "127.0.0.1",
        SMTP_PORT: String(mailpit.smtpPort),
        KEYS_CODE_PEPPER: "grpc-client-test-pepper-0123456789",
        DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
      },
      () => healthy().then(() => true),
    );
    client = new KeyServiceClient(address, credentials.createInsecure());
  });

  after(async () => {
    client?.close();
    await keys?.stop();
    await Promise.all([redis?.stop(), mailpit?.stop()]);
  });

  /** Bridges a grpc-js callback call to a promise. */
  const ask = <T>(start: (callback: (error: ServiceError | null, response: T) => void) => void) =>
    new Promise<T>((resolve, reject) => start((error, response) => (error ? reject(error) : resolve(response))));

  test("register, verify, authenticate, describe and revoke", async () => {
    const email = "internal@example.test";
    const sent = new Date(Date.now() - 1000);
    const registered = await ask<RegisterResponse>((cb) => client.register({ email, clientIp: "" }, cb));
    assert.equal(registered.expiresInSeconds, 900);
    const code = codeIn((await mailpit.latestMessageTo(email, { after: sent })).text);

    const verified = await ask<KeyServiceVerifyResponse>((cb) => client.verify({ email, code, clientIp: "" }, cb));
    assert.match(verified.apiKey, /^dsk_/);
    assert.ok(verified.key?.createdAt instanceof Date);

    const { principal } = await ask<AuthenticateResponse>((cb) => client.authenticate({ apiKey: verified.apiKey }, asGateway(), cb));
    assert.equal(principal?.email, email);
    assert.equal(principal?.keyId, verified.key?.keyId);

    const info = await ask<GetKeyInfoResponse>((cb) => client.getKeyInfo({ apiKey: verified.apiKey }, cb));
    assert.equal(info.key?.maskedEmail, "i*******@example.test");

    assert.equal((await ask<RevokeResponse>((cb) => client.revoke({ email }, asAdmin(), cb))).revokedCount, 1);
    await assert.rejects(ask((cb) => client.authenticate({ apiKey: verified.apiKey }, asGateway(), cb)), (error: ServiceError) => {
      assert.equal(error.code, status.UNAUTHENTICATED);
      assert.equal(error.metadata.get("docservice-error-code")[0], "UNAUTHENTICATED");
      return true;
    });
  });

  test("validation errors carry INVALID_ARGUMENT and the field details", async () => {
    await assert.rejects(ask((cb) => client.verify({ email: "nope", code: "12", clientIp: "" }, cb)), (error: ServiceError) => {
      assert.equal(error.code, status.INVALID_ARGUMENT);
      const details = JSON.parse(String(error.metadata.get("docservice-error-details-bin")[0]));
      assert.deepEqual(details.map((d: { field: string }) => d.field).sort(), ["code", "email"]);
      return true;
    });
  });
});
