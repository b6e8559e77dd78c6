// Signing workers with a key on a token (SoftHSM2): each worker opens the key
// with its own session and signs in its own thread; the sessions a worker
// leaves open when it ends (closed pool, dead thread) are closed by the
// service; a key the worker cannot use is a 503 whose log names the HSM's
// error and never the PIN, counted as a key error on /metrics.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Writable } from "node:stream";
import type { Worker } from "node:worker_threads";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import pkcs11js from "pkcs11js";
import { ServiceError } from "../../services/core/errors.js";
import { serviceMetrics } from "../../services/core/service-metrics.js";
import { openPkcs11Key, type Pkcs11Key } from "../../services/signing/keys/pkcs11/pkcs11-key.js";
import type { SigningKey } from "../../services/signing/keys/signing-key.js";
import { verifyPdfSignatures } from "../../services/signing/pdf/pdf-verifier.js";
import type { SigningWorkers } from "../../services/signing/workers/signing-workers.js";
import { countingSignatures, signWith, startSigningWorkers } from "../support/signing-workers.js";
import { createSoftHsmToken, type SoftHsmToken } from "../support/softhsm.js";

/** A pool's worker threads (private), to end one the way a crash would. */
const threadsOf = (workers: SigningWorkers) => (workers as unknown as { workers: { thread: Worker }[] }).workers.map((worker) => worker.thread);

describe("signing workers with a PKCS#11 key (SoftHSM2)", () => {
  let token: SoftHsmToken;
  let key: Pkcs11Key;
  /** Another user of the module in this process, to look at sessions by handle. */
  let observer: InstanceType<typeof pkcs11js.PKCS11>;

  before(async () => {
    token = await createSoftHsmToken();
    key = await openPkcs11Key({ modulePath: token.modulePath, tokenLabel: token.tokenLabel, pin: token.userPin, keyLabel: "rsa-2048", poolSize: 2 });
    observer = new pkcs11js.PKCS11();
    observer.load(token.modulePath);
  });
  after(async () => {
    observer?.close();
    await key?.close();
    await token?.cleanup();
  });

  const isOpen = (handle: Buffer): boolean => {
    try {
      observer.C_GetSessionInfo(handle);
      return true;
    } catch (error) {
      assert.match(String(error), /CKR_SESSION_HANDLE_INVALID|CKR_SESSION_CLOSED/);
      return false;
    }
  };

  async function assertSignedByToken(signed: Buffer): Promise<void> {
    const verification = await verifyPdfSignatures(signed);
    assert.equal(verification.valid, true, JSON.stringify(verification).slice(0, 500));
    assert.equal(verification.signers[0]?.certificateFingerprint, createHash("sha256").update(key.certificateDer).digest("hex"));
  }

  test("each worker signs on its own session, never asking this thread; closing the pool closes those sessions", async () => {
    const counting = countingSignatures(key);
    const workers = startSigningWorkers(counting, { size: 2 });
    let closed = false;
    try {
      for (const signed of await Promise.all([signWith(workers), signWith(workers), signWith(workers)])) await assertSignedByToken(signed);
      assert.equal(counting.signatures, 0, "no signature was asked of the service's thread");
      await workers.close();
      closed = true;
      // a session or two per worker (two when two of its documents were signed at once; poolSize 2), each closed by the service once its thread had ended
      const closedSessions = new Set(counting.sessionsClosed.map((handle) => handle.toString("hex"))).size;
      assert.ok(closedSessions >= 2 && closedSessions <= 4, `${closedSessions} sessions closed`);
      for (const handle of counting.sessionsClosed) assert.equal(isOpen(handle), false);
      // the service's own key still signs
      assert.ok((await key.sign(Buffer.from("still here"))).length > 0);
    } finally {
      if (!closed) await workers.close();
    }
  });

  test("a worker that dies leaves no session open, and its replacement signs", async () => {
    const counting = countingSignatures(key);
    const workers = startSigningWorkers(counting, { size: 1 });
    try {
      await assertSignedByToken(await signWith(workers));
      const [thread] = threadsOf(workers);
      await thread!.terminate();
      await waitFor(() => counting.sessionsClosed.length === 1);
      assert.equal(isOpen(counting.sessionsClosed[0]!), false);
      await waitFor(() => threadsOf(workers).length === 1 && threadsOf(workers)[0] !== thread);
      await assertSignedByToken(await signWith(workers));
    } finally {
      await workers.close();
    }
  });

  test("a key the worker cannot open is 503 UNAVAILABLE; the log names the HSM's error, not the PIN", async () => {
    const logged: string[] = [];
    const logger = pino({ level: "info" }, new Writable({ write: (chunk, _encoding, done) => (logged.push(String(chunk)), done()) }));
    const elsewhere: SigningKey = {
      ...countingSignatures(key),
      keyForWorkers: () => {
        const worker = key.keyForWorkers();
        return worker.kind === "pkcs11" ? { kind: "pkcs11", settings: { ...worker.settings, keyLabel: "no-such-key" } } : worker;
      },
    };
    const workers = startSigningWorkers(elsewhere, { logger });
    const keyErrors = async () => (await serviceMetrics.getSingleMetric("docservice_signing_key_errors_total")!.get()).values[0]?.value ?? 0;
    const keyErrorsBefore = await keyErrors();
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        await assert.rejects(signWith(workers), (error: unknown) => {
          assert.ok(error instanceof ServiceError);
          assert.equal(error.code, "UNAVAILABLE");
          assert.doesNotMatch(error.message, /no-such-key/);
          return true;
        });
      }
      const failures = logged.filter((line) => line.includes("the signing key failed"));
      assert.equal(failures.length, 2);
      assert.match(failures[0]!, /no private key labelled \\"no-such-key\\" on token \\"docservice-test\\"/);
      assert.ok(!logged.join("").includes(token.userPin));
      assert.equal((await keyErrors()) - keyErrorsBefore, 2, "each failure is on /metrics as a key error");
    } finally {
      await workers.close();
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
