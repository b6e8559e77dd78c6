/**
 * A signing worker thread: loads, extends, saves and signs PDFs, and verifies
 * them, off the service's event loop. It opens the service's key in this
 * thread (keys/key-in-this-thread.ts) and signs with it here.
 */
import { parentPort, workerData } from "node:worker_threads";
import { verifyPdfSignatures } from "../pdf/pdf-verifier.js";
import { openKeyInThisThread } from "../keys/key-in-this-thread.js";
import type { SigningKey, WorkerKey } from "../keys/signing-key.js";
import { runSigningJob } from "./signing-job.js";
import { extendArchive } from "../ltv/archive-extension.js";
import { certificateChainOf } from "../ltv/long-term-validation.js";
import { RevocationSource } from "../ltv/revocation.js";
import { TimestampAuthority } from "../ltv/timestamp-authority.js";
import { serializeError } from "../../core/thread-errors.js";
import { contextFrom, inSpan, startTracing } from "../../core/tracing.js";
import { asBuffer, transferList, type FromWorker, type Task, type ToWorker, type WorkerSetup } from "./worker-protocol.js";

const port = parentPort!;
const setup = (workerData as { data: WorkerSetup }).data;
if (setup.tracedAs) startTracing(setup.tracedAs);
// No roots configured: no chain check (an empty list would distrust every signer).
const trustedRootsDer = setup.trustedRootsDer.length > 0 ? setup.trustedRootsDer.map(asBuffer) : undefined;
const revocation = new RevocationSource(setup.revocation);

const post = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

/** The TSA, telling the parent the certificate its tokens are signed with whenever it changes: its expiry is on /metrics. */
const timestampAuthority = setup.timestampAuthority && reportingCertificate(new TimestampAuthority(setup.timestampAuthority));

function reportingCertificate(tsa: TimestampAuthority): Pick<TimestampAuthority, "requestTimestampToken" | "requestTimestampTokenForDigest"> {
  let reported: Buffer | undefined;
  const report = (token: Buffer) => {
    const [certificate] = certificateChainOf(token);
    if (certificate && !reported?.equals(certificate)) {
      reported = certificate;
      post({ type: "timestampAuthorityCertificate", der: new Uint8Array(certificate) });
    }
    return token;
  };
  return {
    requestTimestampToken: (signature) => tsa.requestTimestampToken(signature).then(report),
    requestTimestampTokenForDigest: (imprint) => tsa.requestTimestampTokenForDigest(imprint).then(report),
  };
}

const sessions = {
  opened: (handle: Buffer) => post({ type: "session", handle: new Uint8Array(handle), open: true }),
  ended: (handle: Buffer) => post({ type: "session", handle: new Uint8Array(handle), open: false }),
};
let key: Promise<SigningKey> | undefined;

/** The key as the structured clone delivers it, its certificates made Buffers again. */
function received(key: WorkerKey): WorkerKey {
  if (key.kind === "local") return { ...key, certificateDer: asBuffer(key.certificateDer), chainDer: key.chainDer.map(asBuffer) };
  return { ...key, settings: { ...key.settings, chainDer: key.settings.chainDer?.map(asBuffer) } };
}

/** The key, opened in this thread at the first need; a failed opening is tried again at the next. */
function signingKey(): Promise<SigningKey> {
  key ??= openKeyInThisThread(received(setup.key), sessions).catch((error: unknown) => {
    key = undefined;
    throw error;
  });
  return key;
}
// opened now, so the first document does not wait for it (a failure waits for that document)
signingKey().catch(() => {});

/** A task, as a span of the trace that asked for it. */
async function run(taskId: number, task: Task, trace: Record<string, string> | undefined): Promise<void> {
  try {
    await inSpan(`signing worker: ${task.kind}`, { parent: trace && contextFrom(trace) }, () => perform(taskId, task));
  } catch (error) {
    post({ type: "failed", taskId, error: serializeError(error) });
  }
}

async function perform(taskId: number, task: Task): Promise<void> {
  if (task.kind === "sign") {
    // the task's PDF is this thread's: moved here, or copied by the structured clone
    const signed = await runSigningJob(task.job, await signingKey(), { timestampAuthority, revocation }, { ownsPdf: true });
    post({ type: "done", taskId, signed }, transferList(signed));
  } else if (task.kind === "extend") {
    const signed = await extendArchive(asBuffer(task.pdf), { timestampAuthority, revocation }, { ownsPdf: true });
    post({ type: "done", taskId, signed }, transferList(signed));
  } else {
    const verification = await verifyPdfSignatures(asBuffer(task.pdf), { trustedRootsDer, revocation });
    post({ type: "done", taskId, verification });
  }
}

port.on("message", (message: ToWorker) => void run(message.taskId, message.task, message.trace));
