// The PKCS#11 signing key against a real SoftHSM2 token (scripts/testenv/setup.sh).
import assert from "node:assert/strict";
import { X509Certificate, randomBytes, verify, type KeyObject } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inspect } from "node:util";
import { after, before, describe, test } from "node:test";
import pkcs11js from "pkcs11js";
import { openPkcs11Key, Pkcs11KeyError, type Pkcs11Key, type Pkcs11KeySettings } from "../../services/signing/keys/pkcs11/pkcs11-key.js";
import type { KeyAlgorithm } from "../../services/signing/keys/signing-key.js";
import { createSoftHsmToken, type SoftHsmToken } from "../support/softhsm.js";

function verifies(algorithm: KeyAlgorithm, publicKey: KeyObject, data: Buffer, signature: Buffer): boolean {
  return algorithm === "ECDSA-P256"
    ? verify("sha256", data, { key: publicKey, dsaEncoding: "der" }, signature)
    : verify("sha256", data, publicKey, signature);
}

describe("PKCS#11 signing key (SoftHSM2)", () => {
  let token: SoftHsmToken;

  before(async () => {
    // Before any key is opened: SoftHSM2 reads SOFTHSM2_CONF when the module is initialised.
    token = await createSoftHsmToken();
  });
  after(async () => {
    await token?.cleanup();
  });

  const settings = (keyLabel: string, more: Partial<Pkcs11KeySettings> = {}): Pkcs11KeySettings => ({
    modulePath: token.modulePath,
    tokenLabel: token.tokenLabel,
    pin: token.userPin,
    keyLabel,
    poolSize: 2,
    ...more,
  });

  async function withKey<T>(keySettings: Pkcs11KeySettings, use: (key: Pkcs11Key) => Promise<T>): Promise<T> {
    const key = await openPkcs11Key(keySettings);
    try {
      return await use(key);
    } finally {
      await key.close();
    }
  }

  for (const [label, algorithm] of [
    ["rsa-2048", "RSA-2048"],
    ["rsa-3072", "RSA-3072"],
    ["ecdsa-p256", "ECDSA-P256"],
  ] as const) {
    test(`${label}: detects ${algorithm}, reads its certificate, signs SHA-256 signatures that verify`, async () => {
      const expected = token.keys.find((key) => key.label === label);
      assert.ok(expected, `the token has no key ${label}`);
      assert.equal(expected.algorithm, algorithm);
      const ca = new X509Certificate(token.caCertificatePem);

      await withKey(settings(label), async (key) => {
        assert.equal(key.algorithm, algorithm);
        const certificate = new X509Certificate(key.certificateDer);
        assert.deepEqual(key.certificateDer, new X509Certificate(expected.certificatePem).raw);
        assert.ok(certificate.checkIssued(ca) && certificate.verify(ca.publicKey), "issued by the test CA");
        assert.deepEqual(key.chainDer, []);

        const data = randomBytes(10_000);
        const signature = await key.sign(data);
        assert.ok(verifies(algorithm, certificate.publicKey, data, signature), "the signature verifies");
        const tampered = Buffer.from(data);
        tampered[0]! ^= 1;
        assert.equal(verifies(algorithm, certificate.publicKey, tampered, signature), false);

        if (algorithm === "ECDSA-P256") {
          // DER ECDSA-Sig-Value; r and s vary, so many signatures cover the
          // encodings with and without a leading 0x00 (OpenSSL rejects non-minimal DER).
          assert.equal(signature[0], 0x30);
          const signatures = await Promise.all(Array.from({ length: 300 }, () => key.sign(data)));
          for (const each of signatures) assert.ok(verifies(algorithm, certificate.publicKey, data, each));
          assert.ok(new Set(signatures.map((s) => s.length)).size > 1, "some r or s needed a leading zero or lost one");
        } else {
          // PKCS#1 v1.5: modulus-sized and deterministic
          assert.equal(signature.length, algorithm === "RSA-2048" ? 256 : 384);
          assert.deepEqual(await key.sign(data), signature);
        }
        assert.ok(verifies(algorithm, certificate.publicKey, Buffer.alloc(0), await key.sign(Buffer.alloc(0))));
      });
    });
  }

  test("chainDer comes from the settings", async () => {
    const caDer = new X509Certificate(token.caCertificatePem).raw;
    await withKey(settings("rsa-2048", { chainDer: [caDer] }), async (key) => {
      assert.deepEqual(key.chainDer, [caDer]);
    });
  });

  test("64 concurrent signatures per key with poolSize 4, three keys at once, all verify", async () => {
    const keys = await Promise.all(token.keys.map((spec) => openPkcs11Key(settings(spec.label, { poolSize: 4 }))));
    try {
      await Promise.all(
        keys.map(async (key) => {
          const publicKey = new X509Certificate(key.certificateDer).publicKey;
          const inputs = Array.from({ length: 64 }, (_, i) => Buffer.from(`document ${i} for ${key.keyLabel}`));
          const signatures = await Promise.all(inputs.map((data) => key.sign(data)));
          for (const [i, data] of inputs.entries()) {
            assert.ok(verifies(key.algorithm, publicKey, data, signatures[i]!), `${key.keyLabel} signature ${i}`);
          }
        }),
      );
    } finally {
      await Promise.all(keys.map((key) => key.close()));
    }
  });

  // Login is per token and process: while another key of this token is open,
  // C_Login answers CKR_USER_ALREADY_LOGGED_IN whatever the PIN. Every test
  // here closes its keys, so this login really checks the PIN.
  test("a wrong PIN is a clear error that does not contain the PIN", async () => {
    const wrongPin = "wrong-pin-731";
    const error = await openPkcs11Key(settings("rsa-2048", { pin: wrongPin })).then(
      () => assert.fail("opened with a wrong PIN"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof Pkcs11KeyError);
    assert.match(error.message, /login to token "docservice-test" failed: wrong PIN \(CKR_PIN_INCORRECT\)/);
    assert.equal(error.returnValue, "CKR_PIN_INCORRECT");
    const everything = inspect(error, { depth: 10, showHidden: true }) + JSON.stringify(error) + String(error.stack);
    assert.ok(!everything.includes(wrongPin), "the PIN must not be in the error");
    assert.ok(!everything.includes(token.userPin));

    // and the module is left in a state where the right PIN works
    await withKey(settings("rsa-2048"), async (key) => assert.ok((await key.sign(Buffer.from("x"))).length > 0));
  });

  test("the PIN does not show when a key is inspected", async () => {
    await withKey(settings("rsa-2048"), async (key) => {
      assert.ok(!inspect(key, { depth: 10, showHidden: true }).includes(token.userPin));
      assert.ok(!JSON.stringify(key).includes(token.userPin));
    });
  });

  test("an unknown key label or token label is a clear error", async () => {
    await assert.rejects(openPkcs11Key(settings("no-such-key")), (error: unknown) => {
      assert.ok(error instanceof Pkcs11KeyError);
      assert.equal(error.message, 'no private key labelled "no-such-key" on token "docservice-test"');
      return true;
    });
    await assert.rejects(openPkcs11Key({ ...settings("rsa-2048"), tokenLabel: "no-such-token" }), {
      name: "Pkcs11KeyError",
      message: /no token labelled "no-such-token" in PKCS#11 module .*libsofthsm2\.so \(tokens present: "docservice-test"\)/,
    });
    await assert.rejects(openPkcs11Key({ ...settings("rsa-2048"), modulePath: "/nonexistent/libpkcs11.so" }), {
      name: "Pkcs11KeyError",
      message: "PKCS#11 module /nonexistent/libpkcs11.so not found",
    });
    await assert.rejects(openPkcs11Key(settings("rsa-2048", { poolSize: 0 })), /poolSize must be an integer/);
  });

  test("sign after close is rejected; close is idempotent", async () => {
    const key = await openPkcs11Key(settings("ecdsa-p256"));
    const inFlight = key.sign(Buffer.from("in flight"));
    await Promise.all([key.close(), key.close()]);
    assert.ok((await inFlight).length > 0, "close waits for signatures in flight");
    await assert.rejects(key.sign(Buffer.from("late")), { name: "Pkcs11KeyError", message: /is closed/ });
  });

  // Another user of the same module in this process (a second pkcs11js load
  // gives the same library, so the same sessions and login state) pulls the
  // rug: it closes every session on the token, or finalises the module. The
  // key must notice, reconnect and go on.
  describe("recovers without a restart", () => {
    let other: InstanceType<typeof pkcs11js.PKCS11>;

    before(() => {
      other = new pkcs11js.PKCS11();
      other.load(token.modulePath);
    });
    after(() => {
      other.close();
    });

    /** The other user's view of the token's slot (initialising the module if nobody has). */
    function otherUsersSlot(): Buffer {
      try {
        other.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
      } catch (error) {
        assert.match(String(error), /CKR_CRYPTOKI_ALREADY_INITIALIZED/);
      }
      const slot = other.C_GetSlotList(true).find((s) => other.C_GetTokenInfo(s).label.trimEnd() === token.tokenLabel);
      assert.ok(slot, "the other user sees the token");
      return slot;
    }

    for (const algorithm of ["rsa-2048", "ecdsa-p256"]) {
      test(`${algorithm}: all sessions closed behind its back (and the login with them)`, async () => {
        await withKey(settings(algorithm, { poolSize: 4 }), async (key) => {
          const publicKey = new X509Certificate(key.certificateDer).publicKey;
          await Promise.all(Array.from({ length: 8 }, () => key.sign(Buffer.from("warm up"))));

          other.C_CloseAllSessions(otherUsersSlot());
          // 16 at once: each of the four dead sessions fails one signature, which is retried
          const inputs = Array.from({ length: 16 }, (_, i) => Buffer.from(`after the rug pull ${i}`));
          const signatures = await Promise.all(inputs.map((data) => key.sign(data)));
          inputs.forEach((data, i) => assert.ok(verifies(key.algorithm, publicKey, data, signatures[i]!)));

          other.C_CloseAllSessions(otherUsersSlot());
          const data = Buffer.from("sequential");
          assert.ok(verifies(key.algorithm, publicKey, data, await key.sign(data)));
          assert.ok(verifies(key.algorithm, publicKey, data, await key.sign(data)));
        });
      });
    }

    test("the module finalised behind its back", async () => {
      await withKey(settings("rsa-3072", { poolSize: 2 }), async (key) => {
        const publicKey = new X509Certificate(key.certificateDer).publicKey;
        otherUsersSlot();
        other.C_Finalize();
        const data = Buffer.from("after C_Finalize");
        assert.ok(verifies(key.algorithm, publicKey, data, await key.sign(data)));
        const many = await Promise.all(Array.from({ length: 8 }, () => key.sign(data)));
        for (const signature of many) assert.ok(verifies(key.algorithm, publicKey, data, signature));
      });
    });

    test("a token that stays gone fails the signature with a clear error, and works again once back", async () => {
      await withKey(settings("rsa-2048", { poolSize: 2 }), async (key) => {
        // Hide the token: re-initialise the module with an empty token directory.
        otherUsersSlot();
        const confPath = process.env.SOFTHSM2_CONF;
        const empty = mkdtempSync(join(token.dir, "empty-"));
        writeFileSync(join(empty, "softhsm2.conf"), `directories.tokendir = ${empty}\nobjectstore.backend = file\n`);
        try {
          process.env.SOFTHSM2_CONF = join(empty, "softhsm2.conf");
          other.C_Finalize();
          other.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
          await assert.rejects(key.sign(Buffer.from("no token")), (error: unknown) => {
            assert.ok(error instanceof Pkcs11KeyError);
            assert.match(error.message, /^signing with key "rsa-2048" on token "docservice-test" failed: CKR_\w+; reconnecting failed: no token labelled "docservice-test"/);
            assert.ok(!error.message.includes(token.userPin));
            return true;
          });
        } finally {
          process.env.SOFTHSM2_CONF = confPath;
          other.C_Finalize();
          other.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
          rmSync(empty, { recursive: true, force: true });
        }
        const data = Buffer.from("token is back");
        const publicKey = new X509Certificate(key.certificateDer).publicKey;
        assert.ok(verifies(key.algorithm, publicKey, data, await key.sign(data)));
      });
    });
  });
});
