import { createHash, randomUUID } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { writeOutput } from "./file-jobs.js";

/** How one file's signing was asked for: the same request again is answered with the document the platform already signed. */
export interface SignClaim {
  eventId: string;
  /** The audit trail's submit time. */
  submittedAt: string;
  /** SHA-256 of the document and of the options it was sent with. */
  request: string;
}

/**
 * Kept beside the result (a hidden file, so folder walks skip it) from
 * before the request until the result is written. A run stopped after the
 * platform signed, but before the result was on disk, resumes with the same
 * eventId and submit time: /v1/sign then answers with the document it signed
 * (eventId replay) instead of signing the file, and recording it, a second
 * time. A changed document or changed options start a new claim.
 */
export class SignClaims {
  constructor(private readonly output: string) {}

  async take(document: Buffer, options: unknown): Promise<SignClaim> {
    const request = createHash("sha256").update(document).update(JSON.stringify(options)).digest("hex");
    const earlier = await this.read();
    if (earlier?.request === request) return earlier;
    const claim = { eventId: `docservice-cli-${randomUUID()}`, submittedAt: new Date().toISOString(), request };
    await writeOutput(this.path, JSON.stringify(claim));
    return claim;
  }

  /** The result is written: the claim is done with. */
  async release(): Promise<void> {
    await rm(this.path, { force: true });
  }

  private get path(): string {
    return join(dirname(this.output), `.${basename(this.output)}.signing.json`);
  }

  private async read(): Promise<SignClaim | undefined> {
    try {
      const claim = JSON.parse(await readFile(this.path, "utf8")) as Partial<SignClaim>;
      return typeof claim.eventId === "string" && typeof claim.submittedAt === "string" && typeof claim.request === "string" ? (claim as SignClaim) : undefined;
    } catch {
      return undefined; // none, or unreadable: a new claim
    }
  }
}
