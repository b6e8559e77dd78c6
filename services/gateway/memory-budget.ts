import { totalmem } from "node:os";
import { cgroupMemoryLimit } from "../core/container-limits.js";
import { ServiceError } from "../core/errors.js";

const MB = 1024 * 1024;

/**
 * What a body costs the process beyond its own bytes while it is served: a
 * document is decoded, parsed, rebuilt and written back (the JSON reply holds
 * it as base64 too), so it is held several times over at its peak.
 */
const DOCUMENT_COPIES = 4;

/** Bodies this small are counted as they are: they are parsed and dropped. */
const DOCUMENT_THRESHOLD_BYTES = 256 * 1024;

/**
 * The bytes that request bodies and the documents made of them may hold at
 * once. A request takes its share before its body is read (its declared
 * length, or its route's limit when it declares none) and gives it back when
 * its answer is done; one that would pass the budget is refused with 503 and
 * Retry-After, so a burst of large uploads queues at the clients instead of
 * in this process's memory.
 */
export class MemoryBudget {
  private held = 0;

  constructor(readonly limitBytes: number) {}

  get heldBytes(): number {
    return this.held;
  }

  /** Takes the share of a body of `bodyBytes`; returns what gives it back. Throws UNAVAILABLE when the budget has no room. */
  take(bodyBytes: number): () => void {
    const share = bodyBytes > DOCUMENT_THRESHOLD_BYTES ? bodyBytes * DOCUMENT_COPIES : bodyBytes;
    // a body larger than the whole budget is let through alone, so that a small budget does not refuse every document forever
    if (this.held + share > this.limitBytes && this.held > 0) {
      throw new ServiceError("UNAVAILABLE", "The server is busy with other large requests; try again shortly.", { retryAfterSeconds: 2 });
    }
    this.held += share;
    let returned = false;
    return () => {
      if (returned) return;
      returned = true;
      this.held -= share;
    };
  }
}

/** DOCSERVICE_MEMORY_BUDGET_MB, else half the container's memory limit, else a quarter of the machine's memory. */
export function memoryBudgetBytes(configuredMb: number | undefined): number {
  if (configuredMb !== undefined) return configuredMb * MB;
  const limit = cgroupMemoryLimit();
  return limit !== undefined ? Math.floor(limit / 2) : Math.floor(totalmem() / 4);
}
