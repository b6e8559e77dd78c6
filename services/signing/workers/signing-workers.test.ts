// A signing worker signs with a local key in its own thread, and asks the
// parent for each signature when the key stays there (a token's key).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createLogger } from "../../core/logger.js";
import { noisePdf } from "../../../test/support/noise-pdf.js";
import { loadOrCreateLocalKey } from "../keys/local-key.js";
import type { SigningKey } from "../keys/signing-key.js";
import { verifyPdfSignatures } from "../pdf/pdf-verifier.js";
import { SigningWorkers } from "./signing-workers.js";

const dir = mkdtempSync(join(tmpdir(), "docservice-signing-workers-"));
let key: SigningKey;
before(async () => {
  key = await loadOrCreateLocalKey(dir);
});
after(async () => {
  await key.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `key`, counting the signatures asked of it on this thread. */
function counted(key: SigningKey, { withPrivateKey }: { withPrivateKey: boolean }): SigningKey & { signatures: number } {
  const wrapper = {
    algorithm: key.algorithm,
    certificateDer: key.certificateDer,
    chainDer: key.chainDer,
    privateKey: withPrivateKey ? key.privateKey : undefined,
    signatures: 0,
    sign(data: Buffer) {
      wrapper.signatures++;
      return key.sign(data);
    },
    close: async () => {},
  };
  return wrapper;
}

async function signOnce(signingKey: SigningKey): Promise<Buffer> {
  const workers = new SigningWorkers(signingKey, { size: 1, queueLimit: 2, trustedRootsDer: [], revocation: { timeoutMs: 1000, allowHosts: [], cacheMs: 0 } }, createLogger("silent"));
  try {
    const pdf = await noisePdf(1, 1000);
    const documentSha256 = createHash("sha256").update(pdf).digest("hex");
    const signer = { name: "Worker Test", email: "worker@example.test" };
    return await workers.sign({ pdf, documentId: "worker-test", documentSha256, signer, events: [], certificatePage: true, level: "B-B", signedAt: new Date() });
  } finally {
    await workers.close();
  }
}

for (const withPrivateKey of [true, false]) {
  test(`with${withPrivateKey ? "" : "out"} the private key in the worker, a signature ${withPrivateKey ? "is made there" : "is asked of this thread"} and verifies`, async () => {
    const signingKey = counted(key, { withPrivateKey });
    const signed = await signOnce(signingKey);
    assert.equal(signingKey.signatures, withPrivateKey ? 0 : 1);
    const verification = await verifyPdfSignatures(signed);
    assert.equal(verification.valid, true, JSON.stringify(verification).slice(0, 500));
  });
}
