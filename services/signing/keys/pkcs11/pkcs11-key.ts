/**
 * A signing key on a PKCS#11 token (an HSM in production, SoftHSM2 in tests),
 * through pkcs11js. The private key never leaves the token.
 *
 * - The module is loaded and initialised once per process (pkcs11/module.ts),
 *   with CKF_OS_LOCKING_OK: signatures run on libuv worker threads, several at
 *   once.
 * - Login is per token, not per session: the first session logs in, the others
 *   share it (CKR_USER_ALREADY_LOGGED_IN counts as success). C_Logout would log
 *   out every session of the process on that token, so it is never called;
 *   closing a key's last session ends its login.
 * - A token runs one operation per session at a time, so the key keeps a pool
 *   of `poolSize` sessions: each signature checks one out and returns it.
 *   Signing runs in libuv's thread pool (C_SignAsync), which has 4 threads
 *   unless UV_THREADPOOL_SIZE says otherwise, shared with fs, dns, zlib and
 *   crypto: a pool larger than that only adds queueing. A key opened
 *   `inThisThread` (a signing worker's own) signs with C_Sign in that thread
 *   instead while the token answers fast, and through the pool while it is
 *   slow (signature-latency.ts).
 * - Sessions belong to the process, not to the thread that opened them: a
 *   worker thread that ends without closing its sessions leaves them open, so
 *   such a key tells `sessions` of each session it opens and ends, and the
 *   parent closes what is left ({@link Pkcs11Key.closeSessionsLeftBy}).
 * - A lost session, login, key handle or token (the token was removed and put
 *   back, the sessions were closed, the module was finalised by another user
 *   in the process) makes the key reconnect: find the token again, drop the
 *   dead sessions, log in, find the key again; the signature is then retried
 *   once. No restart needed.
 * - The PIN is kept in a private field and never appears in a message or a log.
 */
import { X509Certificate, createHash, verify } from "node:crypto";
import { endianness } from "node:os";
import pkcs11js from "pkcs11js";
import { ecdsaRawToDer } from "./ecdsa.js";
import { Pkcs11KeyError, isRecoverable, isSessionGone, pkcs11Failure, reasonOf, returnValueOf } from "./errors.js";
import { acquireModule, type ModuleLease, type Pkcs11 } from "./module.js";
import { SignatureLatency } from "./signature-latency.js";
import type { KeyAlgorithm, SigningKey, WorkerKey } from "../signing-key.js";
import type { Pkcs11KeySettings } from "./settings.js";
import { inSpan } from "../../../core/tracing.js";

export { Pkcs11KeyError } from "./errors.js";
export type { Pkcs11KeySettings } from "./settings.js";

type Handle = Buffer;

/** Told of each session a key opens, and of each it closes or finds gone. */
export interface SessionObserver {
  opened(handle: Handle): void;
  ended(handle: Handle): void;
}

export interface Pkcs11KeyOptions {
  /** Sign with C_Sign in the calling thread, not in libuv's thread pool, while the token answers fast: for a thread with little else to do meanwhile. */
  inThisThread?: boolean;
  sessions?: SessionObserver;
}

type Mechanism = Parameters<Pkcs11["C_SignInit"]>[1];

interface Session {
  handle: Handle;
  /** The reconnect generation this session was last known good in. */
  epoch: number;
}

interface KeyInfo {
  algorithm: KeyAlgorithm;
  id: Buffer;
  /** Bytes C_Sign writes: the modulus size for RSA, r || s for ECDSA. */
  signatureLength: number;
}

/** Where the key is, for lookups and messages. */
interface Place {
  pkcs11: Pkcs11;
  modulePath: string;
  tokenLabel: string;
  keyLabel: string;
  sessions?: SessionObserver;
}

// CK_STATE values (pkcs11js exports no CKS_* constants).
const CKS_RO_USER_FUNCTIONS = 1;
const CKS_RW_USER_FUNCTIONS = 3;
/** DER OID 1.2.840.10045.3.1.7 (prime256v1), as in CKA_EC_PARAMS. */
const P256_EC_PARAMS = Buffer.from("06082a8648ce3d030107", "hex");
const SELF_TEST_DATA = Buffer.from("DocService PKCS#11 key self-test");

/** Opens the key, checks that its certificate matches it (one test signature) and returns it. */
export function openPkcs11Key(settings: Pkcs11KeySettings, options: Pkcs11KeyOptions = {}): Promise<Pkcs11Key> {
  return Pkcs11Key.open(settings, options);
}

export class Pkcs11Key implements SigningKey {
  readonly algorithm: KeyAlgorithm;
  readonly certificateDer: Buffer;
  readonly chainDer: Buffer[];
  readonly tokenLabel: string;
  readonly keyLabel: string;
  readonly poolSize: number;

  readonly #settings: Pkcs11KeySettings;
  /** Set in a key opened `inThisThread`: when to sign synchronously. */
  readonly #latency: SignatureLatency | undefined;
  readonly #lease: ModuleLease;
  readonly #place: Place;
  readonly #mechanism: Mechanism;
  readonly #signatureLength: number;
  #slot: Handle;
  #keyHandle: Handle;
  /** Bumped by each reconnect: a session from an older epoch is checked before use. */
  #epoch = 0;
  #idle: Session[] = [];
  /** Sessions this key owns: idle + checked out. */
  #open = 0;
  #busy = 0;
  #waiters: { resolve(session: Session): void; reject(error: unknown): void }[] = [];
  #closing: Promise<void> | undefined;
  #drained: (() => void) | undefined;

  static async open(settings: Pkcs11KeySettings, options: Pkcs11KeyOptions = {}): Promise<Pkcs11Key> {
    validate(settings);
    const lease = acquireModule(settings.modulePath);
    const place: Place = {
      pkcs11: lease.pkcs11,
      modulePath: settings.modulePath,
      tokenLabel: settings.tokenLabel,
      keyLabel: settings.keyLabel,
      sessions: options.sessions,
    };
    let session: Handle | undefined;
    let key: Pkcs11Key | undefined;
    try {
      const slot = findSlot(place);
      session = openSession(place, slot, settings.pin);
      const keyHandle = findKey(place, session);
      const info = readKeyInfo(place, session, keyHandle);
      const certificateDer = readCertificate(place, session, info);
      key = new Pkcs11Key(settings, options, lease, place, { slot, keyHandle, session, info, certificateDer });
      session = undefined; // the key's now
      await key.#selfTest();
      return key;
    } catch (error) {
      if (session) closeQuietly(place, session);
      if (key) await key.close();
      lease.release();
      throw error;
    }
  }

  private constructor(
    settings: Pkcs11KeySettings,
    options: Pkcs11KeyOptions,
    lease: ModuleLease,
    place: Place,
    found: { slot: Handle; keyHandle: Handle; session: Handle; info: KeyInfo; certificateDer: Buffer },
  ) {
    this.tokenLabel = settings.tokenLabel;
    this.keyLabel = settings.keyLabel;
    this.poolSize = settings.poolSize;
    this.chainDer = [...(settings.chainDer ?? [])];
    this.#settings = { ...settings, chainDer: this.chainDer };
    this.#latency = options.inThisThread ? new SignatureLatency() : undefined;
    this.#lease = lease;
    this.#place = place;
    this.algorithm = found.info.algorithm;
    this.certificateDer = found.certificateDer;
    this.#signatureLength = found.info.signatureLength;
    this.#mechanism = {
      mechanism: this.algorithm === "ECDSA-P256" ? pkcs11js.CKM_ECDSA : pkcs11js.CKM_SHA256_RSA_PKCS,
    };
    this.#slot = found.slot;
    this.#keyHandle = found.keyHandle;
    this.#idle.push({ handle: found.session, epoch: this.#epoch });
    this.#open = 1;
  }

  /** A signature by the token, as a span of the trace that asked for it. */
  sign(data: Buffer): Promise<Buffer> {
    return inSpan("pkcs11 sign", { attributes: { "docservice.key.algorithm": this.algorithm, "docservice.key.token": this.tokenLabel } }, () => this.signOnToken(data));
  }

  private async signOnToken(data: Buffer): Promise<Buffer> {
    const ecdsa = this.algorithm === "ECDSA-P256";
    // CKM_ECDSA signs a digest; CKM_SHA256_RSA_PKCS hashes on the token.
    const input = ecdsa ? createHash("sha256").update(data).digest() : data;
    const what = `signing with key "${this.keyLabel}" on token "${this.tokenLabel}" failed`;
    for (let attempt = 1; ; attempt++) {
      let session: Session | undefined;
      let signature: Buffer;
      try {
        session = await this.#acquire();
        const pkcs11 = this.#place.pkcs11;
        pkcs11.C_SignInit(session.handle, this.#mechanism, this.#keyHandle);
        const out = Buffer.alloc(this.#signatureLength);
        // pkcs11js passes an empty buffer as NULL, which C_Sign refuses
        // (CKR_ARGUMENTS_BAD); a multi-part signature with no part is the same signature.
        const started = performance.now();
        if (this.#latency?.synchronous) {
          signature = input.length > 0 ? pkcs11.C_Sign(session.handle, input, out) : pkcs11.C_SignFinal(session.handle, out);
        } else {
          signature = await (input.length > 0
            ? pkcs11.C_SignAsync(session.handle, input, out)
            : pkcs11.C_SignFinalAsync(session.handle, out));
        }
        this.#latency?.record(performance.now() - started);
      } catch (error) {
        if (session) this.#release(session, error);
        if (attempt > 1 || !isRecoverable(error) || this.#closing) throw pkcs11Failure(what, error);
        try {
          this.#reconnect(session?.epoch ?? this.#epoch);
        } catch (reconnectError) {
          throw new Pkcs11KeyError(`${what}: ${reasonOf(error)}; reconnecting failed: ${reasonOf(reconnectError)}`, {
            returnValue: returnValueOf(reconnectError),
            cause: reconnectError,
          });
        }
        continue;
      }
      this.#release(session);
      return ecdsa ? ecdsaRawToDer(signature) : Buffer.from(signature);
    }
  }

  keyForWorkers(): WorkerKey {
    return { kind: "pkcs11", settings: { ...this.#settings } };
  }

  /** Closes sessions a thread opened on this key's token and left open when it ended (see {@link SessionObserver}). */
  closeSessionsLeftBy(handles: Iterable<Handle>): void {
    for (const handle of handles) closeQuietly({ pkcs11: this.#place.pkcs11 }, handle);
  }

  /** Waits for signatures in flight, closes the sessions, and finalises the module if no other key uses it. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const waiter of this.#waiters.splice(0)) waiter.reject(this.#closedError());
      if (this.#busy > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
      for (const session of this.#idle.splice(0)) closeQuietly(this.#place, session.handle);
      this.#open = 0;
      this.#lease.release();
    })();
    return this.#closing;
  }

  async #selfTest(): Promise<void> {
    const signature = await this.sign(SELF_TEST_DATA);
    const publicKey = new X509Certificate(this.certificateDer).publicKey;
    const key = this.algorithm === "ECDSA-P256" ? { key: publicKey, dsaEncoding: "der" as const } : publicKey;
    if (!verify("sha256", SELF_TEST_DATA, key, signature)) {
      throw new Pkcs11KeyError(
        `the certificate of key "${this.keyLabel}" on token "${this.tokenLabel}" is not for that key (a test signature did not verify)`,
      );
    }
  }

  #acquire(): Promise<Session> {
    if (this.#closing) return Promise.reject(this.#closedError());
    const session = this.#take();
    if (session) return Promise.resolve(session);
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** An idle session that still works, or a new one if the pool has room, or undefined. */
  #take(): Session | undefined {
    for (let session = this.#idle.pop(); session; session = this.#idle.pop()) {
      if (session.epoch === this.#epoch || this.#stillOpen(session)) {
        session.epoch = this.#epoch;
        this.#busy++;
        return session;
      }
      this.#lost(session); // died before the last reconnect: nothing left to close
    }
    if (this.#open >= this.poolSize) return undefined;
    const session = { handle: openSession(this.#place, this.#slot, this.#settings.pin), epoch: this.#epoch };
    this.#open++;
    this.#busy++;
    return session;
  }

  #release(session: Session, error?: unknown): void {
    this.#busy--;
    if (error !== undefined && isSessionGone(error)) {
      this.#lost(session);
    } else if (error !== undefined && returnValueOf(error) === "CKR_OPERATION_ACTIVE") {
      closeQuietly(this.#place, session.handle); // stuck in an operation we did not start
      this.#open--;
    } else {
      this.#idle.push(session);
    }
    this.#serveWaiters();
    if (this.#busy === 0) this.#drained?.();
  }

  /** A session found gone: nothing to close, one fewer open. */
  #lost(session: Session): void {
    this.#open--;
    this.#place.sessions?.ended(session.handle);
  }

  #serveWaiters(): void {
    while (this.#waiters.length > 0) {
      let session: Session | undefined;
      try {
        session = this.#take();
      } catch (error) {
        this.#waiters.shift()!.reject(error);
        continue;
      }
      if (!session) return;
      this.#waiters.shift()!.resolve(session);
    }
  }

  #stillOpen(session: Session): boolean {
    try {
      return this.#place.pkcs11.C_GetSessionInfo(session.handle).slotID.equals(this.#slot);
    } catch {
      return false;
    }
  }

  /**
   * Finds the token again (it may sit in another slot after being put back),
   * re-initialises the module if someone finalised it, drops the sessions that
   * are gone, logs in and finds the key again. Synchronous, so no signature
   * starts halfway through. `epochSeen` is the epoch of the failed session: if
   * a reconnect happened since, that one already did the work.
   */
  #reconnect(epochSeen: number): void {
    if (epochSeen !== this.#epoch) return;
    const { pkcs11 } = this.#place;
    try {
      pkcs11.C_GetSlotList(true);
    } catch (error) {
      if (returnValueOf(error) !== "CKR_CRYPTOKI_NOT_INITIALIZED") {
        throw pkcs11Failure(`PKCS#11 module ${this.#place.modulePath} failed`, error);
      }
      this.#lease.reinitialize();
      // Every session and handle from before is gone with the old initialisation.
      for (const session of this.#idle) this.#lost(session);
      this.#idle = [];
    }
    const slot = findSlot(this.#place);
    if (!slot.equals(this.#slot)) {
      for (const session of this.#idle) closeQuietly(this.#place, session.handle);
      this.#open -= this.#idle.length;
      this.#idle = [];
      this.#slot = slot;
    }
    const alive: Session[] = [];
    for (const session of this.#idle) {
      if (this.#stillOpen(session)) alive.push(session);
      else this.#lost(session);
    }
    let first = alive[0];
    if (first) {
      login(this.#place, first.handle, this.#settings.pin);
    } else {
      first = { handle: openSession(this.#place, this.#slot, this.#settings.pin), epoch: this.#epoch };
      this.#open++;
      alive.push(first);
    }
    this.#keyHandle = findKey(this.#place, first.handle);
    this.#epoch++;
    for (const session of alive) session.epoch = this.#epoch;
    this.#idle = alive;
    this.#serveWaiters();
  }

  #closedError(): Pkcs11KeyError {
    return new Pkcs11KeyError(`PKCS#11 key "${this.keyLabel}" on token "${this.tokenLabel}" is closed`);
  }
}

function validate(settings: Pkcs11KeySettings): void {
  for (const name of ["modulePath", "tokenLabel", "keyLabel"] as const) {
    if (typeof settings[name] !== "string" || settings[name].length === 0) {
      throw new Pkcs11KeyError(`PKCS#11 key settings: ${name} must be a non-empty string`);
    }
  }
  if (typeof settings.pin !== "string") throw new Pkcs11KeyError("PKCS#11 key settings: pin must be a string");
  if (!Number.isInteger(settings.poolSize) || settings.poolSize < 1 || settings.poolSize > 1024) {
    throw new Pkcs11KeyError(`PKCS#11 key settings: poolSize must be an integer from 1 to 1024, got ${settings.poolSize}`);
  }
}

/** The slot holding the token labelled `place.tokenLabel`. */
function findSlot(place: Place): Handle {
  const { pkcs11, tokenLabel, modulePath } = place;
  let slots: Handle[];
  try {
    slots = pkcs11.C_GetSlotList(true);
  } catch (error) {
    throw pkcs11Failure(`C_GetSlotList of PKCS#11 module ${modulePath} failed`, error);
  }
  const others: string[] = [];
  for (const slot of slots) {
    let label: string;
    try {
      label = pkcs11.C_GetTokenInfo(slot).label.trimEnd();
    } catch {
      continue; // removed meanwhile, or not readable: not ours
    }
    if (label === tokenLabel) return slot;
    if (label) others.push(JSON.stringify(label));
  }
  throw new Pkcs11KeyError(
    `no token labelled "${tokenLabel}" in PKCS#11 module ${modulePath} (tokens present: ${others.join(", ") || "none"})`,
    { returnValue: "CKR_TOKEN_NOT_PRESENT" },
  );
}

/** A read-only session on `slot`, logged in (the token's login may have ended with its last session). */
function openSession(place: Place, slot: Handle, pin: string): Handle {
  let session: Handle;
  try {
    session = place.pkcs11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
  } catch (error) {
    throw pkcs11Failure(`cannot open a session on token "${place.tokenLabel}"`, error);
  }
  try {
    const { state } = place.pkcs11.C_GetSessionInfo(session);
    if (state !== CKS_RO_USER_FUNCTIONS && state !== CKS_RW_USER_FUNCTIONS) login(place, session, pin);
    place.sessions?.opened(session);
    return session;
  } catch (error) {
    closeQuietly({ pkcs11: place.pkcs11 }, session); // never reported opened
    throw pkcs11Failure(`cannot open a session on token "${place.tokenLabel}"`, error);
  }
}

function login(place: Place, session: Handle, pin: string): void {
  try {
    place.pkcs11.C_Login(session, pkcs11js.CKU_USER, pin);
  } catch (error) {
    const returnValue = returnValueOf(error);
    if (returnValue === "CKR_USER_ALREADY_LOGGED_IN") return;
    const what =
      returnValue === "CKR_PIN_INCORRECT" ? "wrong PIN" : returnValue === "CKR_PIN_LOCKED" ? "PIN locked" : undefined;
    throw what
      ? new Pkcs11KeyError(`login to token "${place.tokenLabel}" failed: ${what} (${returnValue})`, { returnValue, cause: error })
      : pkcs11Failure(`login to token "${place.tokenLabel}" failed`, error);
  }
}

function findObjects(pkcs11: Pkcs11, session: Handle, template: Parameters<Pkcs11["C_FindObjectsInit"]>[1]): Handle[] {
  pkcs11.C_FindObjectsInit(session, template);
  try {
    return pkcs11.C_FindObjects(session, 16);
  } finally {
    pkcs11.C_FindObjectsFinal(session);
  }
}

function findKey(place: Place, session: Handle): Handle {
  const { pkcs11, keyLabel, tokenLabel } = place;
  let keys: Handle[];
  try {
    keys = findObjects(pkcs11, session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_LABEL, value: keyLabel },
    ]);
  } catch (error) {
    throw pkcs11Failure(`looking for key "${keyLabel}" on token "${tokenLabel}" failed`, error);
  }
  if (keys.length === 0) throw new Pkcs11KeyError(`no private key labelled "${keyLabel}" on token "${tokenLabel}"`);
  if (keys.length > 1) {
    throw new Pkcs11KeyError(`${keys.length} private keys are labelled "${keyLabel}" on token "${tokenLabel}": labels must be unique`);
  }
  return keys[0]!;
}

function readKeyInfo(place: Place, session: Handle, key: Handle): KeyInfo {
  const { pkcs11, keyLabel, tokenLabel } = place;
  const where = `key "${keyLabel}" on token "${tokenLabel}"`;
  const attribute = (type: number): Buffer => {
    try {
      return pkcs11.C_GetAttributeValue(session, key, [{ type }])[0]!.value;
    } catch (error) {
      throw pkcs11Failure(`reading ${where} failed`, error);
    }
  };
  const keyType = readUlong(attribute(pkcs11js.CKA_KEY_TYPE));
  const id = attribute(pkcs11js.CKA_ID);
  if (keyType === pkcs11js.CKK_RSA) {
    const modulus = withoutLeadingZeros(attribute(pkcs11js.CKA_MODULUS));
    const bits = modulus.length === 0 ? 0 : (modulus.length - 1) * 8 + modulus[0]!.toString(2).length;
    if (bits !== 2048 && bits !== 3072) throw new Pkcs11KeyError(`${where} is RSA-${bits}: only RSA-2048 and RSA-3072 are supported`);
    return { algorithm: bits === 2048 ? "RSA-2048" : "RSA-3072", id, signatureLength: modulus.length };
  }
  if (keyType === pkcs11js.CKK_EC) {
    const params = attribute(pkcs11js.CKA_EC_PARAMS);
    if (!params.equals(P256_EC_PARAMS)) {
      throw new Pkcs11KeyError(`${where} is an EC key on another curve than P-256 (CKA_EC_PARAMS ${params.toString("hex")})`);
    }
    return { algorithm: "ECDSA-P256", id, signatureLength: 64 };
  }
  throw new Pkcs11KeyError(`${where} has key type ${keyType}: only RSA and EC (P-256) keys are supported`);
}

/** The key's certificate: the CKO_CERTIFICATE with the key's label, else the one with its CKA_ID. */
function readCertificate(place: Place, session: Handle, info: KeyInfo): Buffer {
  const { pkcs11, keyLabel, tokenLabel } = place;
  const where = `key "${keyLabel}" on token "${tokenLabel}"`;
  let der: Buffer;
  try {
    const certificate = pkcs11js.CKO_CERTIFICATE;
    let found = findObjects(pkcs11, session, [
      { type: pkcs11js.CKA_CLASS, value: certificate },
      { type: pkcs11js.CKA_LABEL, value: keyLabel },
    ]);
    if (found.length === 0 && info.id.length > 0) {
      found = findObjects(pkcs11, session, [
        { type: pkcs11js.CKA_CLASS, value: certificate },
        { type: pkcs11js.CKA_ID, value: info.id },
      ]);
    }
    if (found.length === 0) {
      throw new Pkcs11KeyError(`no certificate for ${where} (none with its label or its CKA_ID)`);
    }
    if (found.length > 1) throw new Pkcs11KeyError(`${found.length} certificates match ${where}: expected one`);
    der = Buffer.from(pkcs11.C_GetAttributeValue(session, found[0]!, [{ type: pkcs11js.CKA_VALUE }])[0]!.value);
  } catch (error) {
    throw pkcs11Failure(`reading the certificate of ${where} failed`, error);
  }

  let publicKey;
  try {
    publicKey = new X509Certificate(der).publicKey;
  } catch (error) {
    throw new Pkcs11KeyError(`the certificate of ${where} cannot be parsed`, { cause: error });
  }
  const details = publicKey.asymmetricKeyDetails ?? {};
  const certified =
    publicKey.asymmetricKeyType === "rsa"
      ? `RSA-${details.modulusLength}`
      : publicKey.asymmetricKeyType === "ec" && details.namedCurve === "prime256v1"
        ? "ECDSA-P256"
        : `${publicKey.asymmetricKeyType} ${details.namedCurve ?? ""}`.trim();
  if (certified !== info.algorithm) {
    throw new Pkcs11KeyError(`the certificate of ${where} is for a ${certified} key, the key is ${info.algorithm}`);
  }
  return der;
}

function closeQuietly(place: Pick<Place, "pkcs11" | "sessions">, session: Handle): void {
  try {
    place.pkcs11.C_CloseSession(session);
  } catch {
    // already gone
  }
  place.sessions?.ended(session);
}

/** A CK_ULONG attribute: native byte order, 8 bytes on 64-bit Unix, 4 on Windows. */
function readUlong(value: Buffer): number {
  const le = endianness() === "LE";
  if (value.length === 8) return Number(le ? value.readBigUInt64LE() : value.readBigUInt64BE());
  if (value.length === 4) return le ? value.readUInt32LE() : value.readUInt32BE();
  throw new Pkcs11KeyError(`unexpected CK_ULONG of ${value.length} bytes`);
}

function withoutLeadingZeros(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  return bytes.subarray(start);
}
