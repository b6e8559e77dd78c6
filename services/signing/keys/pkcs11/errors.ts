import pkcs11js from "pkcs11js";

/**
 * An error from a PKCS#11 key. Its message names the token, the key and the
 * PKCS#11 return value, never the PIN, so it is safe to log.
 */
export class Pkcs11KeyError extends Error {
  /** The PKCS#11 return value behind it, e.g. "CKR_PIN_INCORRECT", if any. */
  readonly returnValue: string | undefined;

  constructor(message: string, options: { returnValue?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "Pkcs11KeyError";
    this.returnValue = options.returnValue;
  }
}

/** The CKR_* name behind a pkcs11js error or a Pkcs11KeyError ("CKR_PIN_INCORRECT"), else undefined. */
export function returnValueOf(error: unknown): string | undefined {
  if (error instanceof Pkcs11KeyError) return error.returnValue;
  if (error instanceof pkcs11js.Pkcs11Error && /^CKR_\w+$/.test(error.message)) return error.message;
  return undefined;
}

/**
 * `what failed: CKR_X` for a pkcs11js error, `what failed: message` for any
 * other. Only pkcs11js's own message is used, which never holds arguments
 * (no PIN can leak through it).
 */
export function pkcs11Failure(what: string, error: unknown): Pkcs11KeyError {
  if (error instanceof Pkcs11KeyError) return error;
  return new Pkcs11KeyError(`${what}: ${reasonOf(error)}`, { returnValue: returnValueOf(error), cause: error });
}

/** "CKR_X" for a pkcs11js error, else the error's message (a Pkcs11KeyError's is already safe). */
export function reasonOf(error: unknown): string {
  if (error instanceof Pkcs11KeyError) return error.message;
  return returnValueOf(error) ?? (error instanceof Error ? error.message : String(error));
}

/** The session is gone (closed, or its token or the whole module is). */
const SESSION_GONE = new Set([
  "CKR_SESSION_HANDLE_INVALID",
  "CKR_SESSION_CLOSED",
  "CKR_DEVICE_REMOVED",
  "CKR_TOKEN_NOT_PRESENT",
  "CKR_TOKEN_NOT_RECOGNIZED",
  "CKR_SLOT_ID_INVALID",
  "CKR_CRYPTOKI_NOT_INITIALIZED",
]);

/**
 * Worth reconnecting (find the token again, log in, find the key) and retrying
 * once: the session, the login or the key handle was lost, not the request.
 */
const RECOVERABLE = new Set([
  ...SESSION_GONE,
  "CKR_USER_NOT_LOGGED_IN",
  "CKR_KEY_HANDLE_INVALID",
  "CKR_OBJECT_HANDLE_INVALID",
  "CKR_OPERATION_ACTIVE",
]);

export function isSessionGone(error: unknown): boolean {
  return SESSION_GONE.has(returnValueOf(error) ?? "");
}

export function isRecoverable(error: unknown): boolean {
  return RECOVERABLE.has(returnValueOf(error) ?? "");
}
