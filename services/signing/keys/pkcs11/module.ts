import { realpathSync } from "node:fs";
import pkcs11js from "pkcs11js";
import { Pkcs11KeyError, pkcs11Failure, returnValueOf } from "./errors.js";

export type Pkcs11 = InstanceType<typeof pkcs11js.PKCS11>;

/** A use of a loaded, initialised PKCS#11 module; release it when done. */
export interface ModuleLease {
  readonly pkcs11: Pkcs11;
  readonly path: string;
  /** C_Initialize again, after someone finalised the module (CKR_CRYPTOKI_NOT_INITIALIZED). */
  reinitialize(): void;
  /** The last release finalises and unloads the module. Idempotent per lease. */
  release(): void;
}

interface LoadedModule {
  pkcs11: Pkcs11;
  users: number;
  /** False if the module was already initialised when we loaded it: then someone else finalises it. */
  ownsInitialization: boolean;
}

/**
 * One PKCS#11 module is one library per process: loading it twice gives the
 * same library (the same sessions, the same login state), and C_Finalize ends
 * it for every user. So every key of a module shares one load, initialised
 * once and finalised when its last key closes.
 */
const loaded = new Map<string, LoadedModule>();

export function acquireModule(path: string): ModuleLease {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (error) {
    throw new Pkcs11KeyError(`PKCS#11 module ${path} not found`, { cause: error });
  }
  let module = loaded.get(real);
  if (!module) {
    const pkcs11 = new pkcs11js.PKCS11();
    try {
      pkcs11.load(real);
    } catch (error) {
      throw pkcs11Failure(`cannot load PKCS#11 module ${path}`, error);
    }
    let ownsInitialization: boolean;
    try {
      ownsInitialization = initialize(pkcs11);
    } catch (error) {
      pkcs11.close();
      throw pkcs11Failure(`C_Initialize of PKCS#11 module ${path} failed`, error);
    }
    module = { pkcs11, users: 0, ownsInitialization };
    loaded.set(real, module);
  }
  module.users++;

  const current = module;
  let released = false;
  return {
    pkcs11: current.pkcs11,
    path,
    reinitialize() {
      try {
        if (initialize(current.pkcs11)) current.ownsInitialization = true;
      } catch (error) {
        throw pkcs11Failure(`C_Initialize of PKCS#11 module ${path} failed`, error);
      }
    },
    release() {
      if (released) return;
      released = true;
      if (--current.users > 0) return;
      loaded.delete(real);
      if (current.ownsInitialization) {
        try {
          current.pkcs11.C_Finalize();
        } catch {
          // already finalised by someone else: nothing left to end
        }
      }
      current.pkcs11.close();
    },
  };
}

/**
 * C_Initialize with CKF_OS_LOCKING_OK: signatures run on libuv's worker
 * threads, several at once, and without this flag the module may assume a
 * single thread (SoftHSM2 then corrupted its heap under concurrent signing).
 * Returns false if the module was already initialised in this process.
 */
function initialize(pkcs11: Pkcs11): boolean {
  try {
    pkcs11.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
    return true;
  } catch (error) {
    if (returnValueOf(error) === "CKR_CRYPTOKI_ALREADY_INITIALIZED") return false;
    throw error;
  }
}
