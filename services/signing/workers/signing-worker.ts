/**
 * A signing worker thread: loads, extends, saves and signs PDFs, and verifies
 * them, off the service's event loop. A local key is here too, and signs in
 * this thread; a token's key is not: each raw signature is then asked of the
 * parent, which holds it (a PKCS#11 session pool cannot be shared across
 * threads).
 */
import { parentPort, workerData } from "node:worker_threads";
import { verifyPdfSignatures } from "../pdf/pdf-verifier.js";
import { signingInThisThread } from "../keys/local-key.js";
import type { SigningKey } from "../keys/signing-key.js";
import { runSigningJob } from "./signing-job.js";
import { extendArchive } from "../ltv/archive-extension.js";
import { RevocationSource } from "../ltv/revocation.js";
import { TimestampAuthority } from "../ltv/timestamp-authority.js";
import { deserializeError, serializeError } from "../../core/thread-errors.js";
import { asBuffer, transferList, type FromWorker, type Task, type ToWorker, type WorkerSetup } from "./worker-protocol.js";

const port = parentPort!;
const setup = (workerData as { data: WorkerSetup }).data;
// No roots configured: no chain check (an empty list would distrust every signer).
const trustedRootsDer = setup.trustedRootsDer.length > 0 ? setup.trustedRootsDer.map(asBuffer) : undefined;
const timestampAuthority = setup.timestampAuthority && new TimestampAuthority(setup.timestampAuthority);
const revocation = new RevocationSource(setup.revocation);
const pendingSignatures = new Map<number, { resolve(signature: Buffer): void; reject(error: Error): void }>();
let nextCallId = 1;

const post = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

const certificates = { algorithm: setup.algorithm, certificateDer: asBuffer(setup.certificateDer), chainDer: setup.chainDer.map(asBuffer) };
const localKey = setup.privateKey && signingInThisThread(setup.privateKey, certificates);

/** The key as seen from this thread: the local key, or certificates here and signatures from the parent. */
function keyForTask(taskId: number): SigningKey {
  if (localKey) return localKey;
  return {
    ...certificates,
    sign(data) {
      const callId = nextCallId++;
      return new Promise((resolve, reject) => {
        pendingSignatures.set(callId, { resolve, reject });
        post({ type: "sign", taskId, callId, data });
      });
    },
    close: async () => {},
  };
}

async function run(taskId: number, task: Task): Promise<void> {
  try {
    if (task.kind === "sign") {
      // the task's PDF is this thread's: moved here, or copied by the structured clone
      const signed = await runSigningJob(task.job, keyForTask(taskId), { timestampAuthority, revocation }, { ownsPdf: true });
      post({ type: "done", taskId, signed }, transferList(signed));
    } else if (task.kind === "extend") {
      const signed = await extendArchive(asBuffer(task.pdf), { timestampAuthority, revocation }, { ownsPdf: true });
      post({ type: "done", taskId, signed }, transferList(signed));
    } else {
      const verification = await verifyPdfSignatures(asBuffer(task.pdf), { trustedRootsDer, revocation });
      post({ type: "done", taskId, verification });
    }
  } catch (error) {
    post({ type: "failed", taskId, error: serializeError(error) });
  }
}

port.on("message", (message: ToWorker) => {
  if (message.type === "task") {
    void run(message.taskId, message.task);
    return;
  }
  const pending = pendingSignatures.get(message.callId);
  pendingSignatures.delete(message.callId);
  if (!pending) return;
  if (message.signature) pending.resolve(asBuffer(message.signature));
  else pending.reject(deserializeError(message.error!));
});
