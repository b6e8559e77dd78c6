import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { connect, createServer, type TLSSocket } from "node:tls";
import { createCa, issueLeaf, leafIsCurrent, LEAF_VALIDITY_DAYS, RENEW_BEFORE_DAYS, serviceDnsNames, type KeyPairPem } from "./internal-pki.js";

const DAY_MS = 86_400_000;

/** A mutual-TLS handshake between a server holding `server` and a client holding `client`, both trusting `ca`; the client's peer CN as the server saw it. */
async function handshake(ca: string, server: KeyPairPem, client: KeyPairPem, servername: string): Promise<string> {
  const listener = createServer({ cert: server.certificate, key: server.privateKey, ca, requestCert: true, rejectUnauthorized: true }, (socket) => {
    socket.end(String((socket as TLSSocket).getPeerCertificate().subject.CN));
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  try {
    return await new Promise<string>((resolve, reject) => {
      const socket = connect({ port: (listener.address() as AddressInfo).port, host: "127.0.0.1", servername, ca, cert: client.certificate, key: client.privateKey });
      let text = "";
      socket.on("data", (chunk) => (text += chunk));
      // under TLS 1.3 a refused client certificate surfaces after the client's handshake: as an alert, or a close without an answer
      socket.on("end", () => (text ? resolve(text) : reject(new Error("closed by the server without an answer"))));
      socket.on("error", reject);
    });
  } finally {
    listener.close();
  }
}

describe("internal PKI", () => {
  test("a component certificate serves its Service names and authenticates it as a client, under the instance's CA only", async () => {
    const ca = createCa("acme internal CA");
    const keys = issueLeaf(ca, serviceDnsNames("acme-keys", "prod"));
    const gateway = issueLeaf(ca, serviceDnsNames("acme-gateway", "prod"));
    assert.equal(await handshake(ca.certificate, keys, gateway, "acme-keys.prod.svc"), "acme-gateway");

    await assert.rejects(handshake(ca.certificate, keys, gateway, "acme-signing"), /does not match|altnames/i);
    const otherCa = createCa("another CA");
    const stranger = issueLeaf(otherCa, serviceDnsNames("acme-gateway", "prod"));
    await assert.rejects(handshake(ca.certificate, keys, stranger, "acme-keys"));
  });

  test("renewal: current while signed by the CA, named as wanted and far from expiry", async () => {
    const now = new Date("2026-11-25T12:00:00Z");
    const ca = createCa("acme internal CA", now);
    const names = serviceDnsNames("acme-keys", "prod");
    const leaf = issueLeaf(ca, names, now);
    assert.equal(leafIsCurrent(leaf.certificate, ca.certificate, names, now), true);
    const renewAt = new Date(now.getTime() + (LEAF_VALIDITY_DAYS - RENEW_BEFORE_DAYS) * DAY_MS);
    assert.equal(leafIsCurrent(leaf.certificate, ca.certificate, names, new Date(renewAt.getTime() - DAY_MS)), true);
    assert.equal(leafIsCurrent(leaf.certificate, ca.certificate, names, new Date(renewAt.getTime() + DAY_MS)), false);
    assert.equal(leafIsCurrent(leaf.certificate, ca.certificate, serviceDnsNames("acme-keys", "staging"), now), false);
    assert.equal(leafIsCurrent(leaf.certificate, (createCa("another CA", now)).certificate, names, now), false);
    assert.equal(leafIsCurrent("not a certificate", ca.certificate, names, now), false);
  });
});
