// A signing worker opens the service's local key in its own thread and signs
// there; the service's own copy of the key is never asked. (The same with a
// key on a token: test/integration/signing-workers-pkcs11.test.ts.)
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { loadOrCreateLocalKey } from "../keys/local-key.js";
import type { SigningKey } from "../keys/signing-key.js";
import { verifyPdfSignatures } from "../pdf/pdf-verifier.js";
import { countingSignatures, signOnce } from "../../../test/support/signing-workers.js";

const dir = mkdtempSync(join(tmpdir(), "docservice-signing-workers-"));
let key: SigningKey;
before(async () => {
  key = await loadOrCreateLocalKey(dir);
});
after(async () => {
  await key.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a local key signs in the worker thread, and the signature verifies", async () => {
  const signingKey = countingSignatures(key);
  const signed = await signOnce(signingKey);
  assert.equal(signingKey.signatures, 0);
  const verification = await verifyPdfSignatures(signed);
  assert.equal(verification.valid, true, JSON.stringify(verification).slice(0, 500));
});
