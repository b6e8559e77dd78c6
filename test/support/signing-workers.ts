/** Signing through SigningWorkers in tests: one 1-page document, and a key that counts what it is asked on this thread. */
import { createHash } from "node:crypto";
import { createLogger, type Logger } from "../../services/core/logger.js";
import type { SigningKey } from "../../services/signing/keys/signing-key.js";
import { SigningWorkers } from "../../services/signing/workers/signing-workers.js";
import { noisePdf } from "./noise-pdf.js";

export function startSigningWorkers(key: SigningKey, options: { size?: number; logger?: Logger } = {}): SigningWorkers {
  return new SigningWorkers(
    key,
    { size: options.size ?? 1, queueLimit: 8, trustedRootsDer: [], revocation: { timeoutMs: 1000, allowHosts: [], cacheMs: 0 } },
    options.logger ?? createLogger("silent"),
  );
}

/** Signs one 1-page document at B-B with its certificate page. */
export async function signWith(workers: SigningWorkers): Promise<Buffer> {
  const pdf = await noisePdf(1, 1000);
  const documentSha256 = createHash("sha256").update(pdf).digest("hex");
  const signer = { name: "Worker Test", email: "worker@example.test" };
  return workers.sign({ pdf, documentId: "worker-test", documentSha256, signer, events: [], certificatePage: true, level: "B-B", signedAt: new Date() });
}

/** Signs one document through a pool of one worker, then closes the pool. */
export async function signOnce(key: SigningKey): Promise<Buffer> {
  const workers = startSigningWorkers(key);
  try {
    return await signWith(workers);
  } finally {
    await workers.close();
  }
}

/** `key`, counting the signatures asked of it on this thread and recording the sessions it is asked to close for a worker. */
export function countingSignatures(key: SigningKey): SigningKey & { signatures: number; sessionsClosed: Buffer[] } {
  const counting = {
    algorithm: key.algorithm,
    certificateDer: key.certificateDer,
    chainDer: key.chainDer,
    signatures: 0,
    sessionsClosed: [] as Buffer[],
    keyForWorkers: () => key.keyForWorkers(),
    closeSessionsLeftBy(handles: Iterable<Buffer>) {
      const all = [...handles];
      counting.sessionsClosed.push(...all);
      key.closeSessionsLeftBy?.(all);
    },
    sign(data: Buffer) {
      counting.signatures++;
      return key.sign(data);
    },
    close: async () => {},
  };
  return counting;
}
