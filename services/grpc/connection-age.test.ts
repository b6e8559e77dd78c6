import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { credentials, makeGenericClientConstructor, Server, ServerCredentials, type ServiceDefinition } from "@grpc/grpc-js";

const identity = { serialize: (value: Buffer) => value, deserialize: (value: Buffer) => value };
const SLOW: ServiceDefinition = {
  wait: { path: "/test.Slow/Wait", requestStream: false, responseStream: false, requestSerialize: identity.serialize, requestDeserialize: identity.deserialize, responseSerialize: identity.serialize, responseDeserialize: identity.deserialize },
};

// A server asks a connection past its max age to go away, and lets its calls finish within the grace period. grpc-js went on
// sending keepalive pings on it: a ping on a closing HTTP/2 session is refused, and grpc-js took that for a dead peer and
// destroyed the connection, cutting the calls it had just allowed to finish (patches/@grpc+grpc-js).
test("a connection past its max age keeps its calls to the end of the grace period, keepalive pings notwithstanding", async () => {
  const server = new Server({
    "grpc.max_connection_age_ms": 200,
    "grpc.max_connection_age_grace_ms": 10_000,
    // the first ping falls while the connection drains
    "grpc.keepalive_time_ms": 600,
    "grpc.keepalive_timeout_ms": 5000,
  });
  server.addService(SLOW, {
    wait: (call: { request: Buffer }, callback: (error: null, value: Buffer) => void) => void sleep(1500).then(() => callback(null, call.request)),
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  const Client = makeGenericClientConstructor(SLOW, "Slow");
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as {
    wait(request: Buffer, callback: (error: Error | null, value?: Buffer) => void): void;
    close(): void;
  };
  try {
    const answer = await new Promise<string>((resolve) => client.wait(Buffer.from("draining"), (error, value) => resolve(error ? error.message : value!.toString())));
    assert.equal(answer, "draining");
  } finally {
    client.close();
    server.forceShutdown();
  }
});
