/**
 * A signing worker thread's own handle on the service's key, so each
 * signature is made where its document is being signed, with no hand-over to
 * another thread: the local key itself, or a key on the token opened again
 * with its own session.
 */
import { signingInThisThread } from "./local-key.js";
import { openPkcs11Key, type SessionObserver } from "./pkcs11/pkcs11-key.js";
import type { SigningKey, WorkerKey } from "./signing-key.js";

export async function openKeyInThisThread(key: WorkerKey, sessions: SessionObserver): Promise<SigningKey> {
  if (key.kind === "local") return signingInThisThread(key.privateKey, key);
  return openPkcs11Key(key.settings, { inThisThread: true, sessions });
}
