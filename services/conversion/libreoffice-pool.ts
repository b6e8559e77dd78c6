import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ServiceError, validationError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { PDF, type ConvertTarget } from "./convert-target.js";
import type { Converter, ConverterLoad } from "./converter.js";
import { libreOfficeExport, type LibreOfficeExport } from "./libreoffice-export.js";
import type { FormatSpec } from "./source-format.js";
import { convertCold } from "./cold-conversion.js";
import { reapGroupsIn } from "./process-groups.js";
import { ConversionFault, UnoserverInstance } from "./unoserver-instance.js";

export interface PoolSettings {
  size: number;
  unoserverBin: string;
  directory: string;
  timeoutMs: number;
  /** Jobs waiting for an instance; one more is refused with 503. */
  queueLimit: number;
  /** An idle instance whose process tree uses more is restarted. */
  memoryLimitBytes: number;
  startTimeoutMs: number;
  logger: Logger;
}

interface Job {
  input: Buffer;
  format: FormatSpec;
  exported: LibreOfficeExport;
  /** Runs so far; a job whose instance crashed under it is run once more elsewhere. */
  runs: number;
  resolve(output: Buffer): void;
  reject(error: unknown): void;
}

/** How a run ended, for the instance: converted, refused the document, timed out, or broke. */
type RunOutcome = "converted" | "refused" | "timed out" | "broken";

type Slot = { instance: UnoserverInstance; state: "starting" | "idle" | "busy" | "stopped"; conversions: number };

const RESTART_DELAY_MS = 1000;

function timeoutError(timeoutMs: number): ServiceError {
  return new ServiceError("TIMEOUT", `The conversion took longer than ${timeoutMs / 1000} s and was stopped; the document may be too complex or damaged.`);
}

/**
 * A pool of warm LibreOffice instances (one per core by default). Jobs wait in
 * one FIFO queue and every idle instance takes the oldest, so a document that
 * freezes one instance delays nobody queued behind it: the other instances go
 * on, and the frozen one is killed at the timeout and restarted.
 */
export class LibreOfficePool implements Converter {
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private readonly workDirectory: string;
  private closed = false;

  constructor(private readonly settings: PoolSettings) {
    this.workDirectory = join(settings.directory, "work");
    mkdirSync(this.workDirectory, { recursive: true });
    this.slots = Array.from({ length: settings.size }, (_, id) => ({
      instance: new UnoserverInstance(
        id,
        { unoserverBin: settings.unoserverBin, directory: join(settings.directory, `instance-${id}`), startTimeoutMs: settings.startTimeoutMs, logger: settings.logger },
        () => this.restartIfIdle(this.slots[id]),
      ),
      state: "starting",
      conversions: 0,
    }));
  }

  /** Starts every instance in parallel; jobs submitted meanwhile wait in the queue. */
  async start(): Promise<void> {
    const started = performance.now();
    const reaped = reapGroupsIn(this.settings.directory);
    if (reaped > 0) this.settings.logger.warn({ groups: reaped, directory: this.settings.directory }, "killed LibreOffice processes an earlier run left in the pool's directory");
    await Promise.all(this.slots.map((slot) => this.startSlot(slot)));
    this.settings.logger.info(
      { instances: this.slots.filter((s) => s.state === "idle" || s.state === "busy").length, of: this.slots.length, ms: Math.round(performance.now() - started) },
      "LibreOffice pool started",
    );
  }

  convert(document: Buffer, format: FormatSpec, target: ConvertTarget = PDF): Promise<Buffer> {
    if (this.closed) return Promise.reject(new ServiceError("UNAVAILABLE", "The converter is shutting down.", { retryAfterSeconds: 5 }));
    if (this.queue.length >= this.settings.queueLimit) {
      return Promise.reject(new ServiceError("UNAVAILABLE", "Too many conversions are waiting; try again shortly.", { retryAfterSeconds: 5 }));
    }
    if (target.to === "pdf" && target.pdfa && target.pdfua) {
      // veraPDF fails such a file on PDF/A's rule 6.6.2.3.1
      return Promise.reject(
        validationError([{ field: "pdfua", issue: "cannot be combined with pdfa here: LibreOffice 7.4 writes the PDF/UA identification without the XMP extension schema PDF/A requires" }]),
      );
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ input: document, format, exported: libreOfficeExport(target), runs: 0, resolve, reject });
      this.dispatch();
    });
  }

  async health(): Promise<void> {
    if (!this.slots.some((s) => s.state === "idle" || s.state === "busy")) throw new Error("no LibreOffice instance is running yet");
  }

  load(): ConverterLoad {
    return { waiting: this.queue.length, converting: this.slots.filter((s) => s.state === "busy").length };
  }

  /** Conversions done by each instance, and its state. */
  stats(): Array<{ id: number; state: Slot["state"]; conversions: number; pid: number | undefined }> {
    return this.slots.map((s) => ({ id: s.instance.id, state: s.state, conversions: s.conversions, pid: s.instance.pid }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new ServiceError("UNAVAILABLE", "The converter is shutting down.", { retryAfterSeconds: 5 }));
    await Promise.all(
      this.slots.map((slot) => {
        slot.state = "stopped";
        return slot.instance.kill();
      }),
    );
  }

  private async startSlot(slot: Slot): Promise<void> {
    slot.state = "starting";
    try {
      await slot.instance.start();
      if (this.closed) return void (await slot.instance.kill());
      slot.state = "idle";
      this.dispatch();
    } catch (error) {
      this.settings.logger.error({ instance: slot.instance.id, err: (error as Error).message }, "LibreOffice instance failed to start");
      if (!this.closed) setTimeout(() => void this.startSlot(slot), RESTART_DELAY_MS).unref();
    }
  }

  /** A crash while busy is handled where the job fails (afterRun); a crash while idle, here. */
  private restartIfIdle(slot: Slot): void {
    if (this.closed || slot.state !== "idle") return;
    void this.startSlot(slot);
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.state !== "idle" || this.queue.length === 0) continue;
      void this.run(slot, this.queue.shift()!);
    }
  }

  private async run(slot: Slot, job: Job): Promise<void> {
    slot.state = "busy";
    job.runs++;
    const started = Date.now();
    const name = join(this.workDirectory, randomUUID());
    const [inputPath, outputPath] = [`${name}.in`, `${name}.${job.exported.extension}`];
    let outcome: RunOutcome = "converted";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.settings.logger.warn({ instance: slot.instance.id, timeoutMs: this.settings.timeoutMs }, "conversion timed out; killing the instance");
      void slot.instance.kill();
    }, this.settings.timeoutMs);
    try {
      await writeFile(inputPath, job.input);
      await slot.instance.convert(inputPath, outputPath, job.format.importFilter, job.exported);
      job.resolve(await readFile(outputPath));
      slot.conversions++;
    } catch (error) {
      clearTimeout(timer);
      if (timedOut) {
        outcome = "timed out";
        job.reject(timeoutError(this.settings.timeoutMs));
      } else if (error instanceof ConversionFault) {
        outcome = "refused";
        await this.convertColdOrReject(slot, job, inputPath, this.settings.timeoutMs - (Date.now() - started), error);
      } else {
        outcome = "broken";
        if (job.runs < 2) {
          this.settings.logger.warn({ instance: slot.instance.id, err: (error as Error).message }, "LibreOffice instance failed mid-conversion; retrying on another");
          this.queue.unshift(job);
        } else {
          job.reject(new ServiceError("UNPROCESSABLE_DOCUMENT", "LibreOffice crashed twice converting the document.", { cause: error }));
        }
      }
    } finally {
      clearTimeout(timer);
      await Promise.all([rm(inputPath, { force: true }), rm(outputPath, { force: true })]);
      await this.afterRun(slot, outcome);
    }
  }

  /** The warm path refused the document: a cold soffice decides whether LibreOffice can convert it at all. */
  private async convertColdOrReject(slot: Slot, job: Job, inputPath: string, remainingMs: number, fault: ConversionFault): Promise<void> {
    this.settings.logger.info({ instance: slot.instance.id, fault: fault.message.slice(0, 200) }, "warm conversion refused the document; trying a cold soffice");
    const started = Date.now();
    try {
      const outputPath = await convertCold(inputPath, job.format.importFilter, job.exported, join(this.settings.directory, `cold-profile-${slot.instance.id}`), Math.max(remainingMs, 1000));
      job.resolve(await readFile(outputPath));
      await rm(outputPath, { force: true });
      slot.conversions++;
    } catch (error) {
      job.reject(
        Date.now() - started >= remainingMs
          ? timeoutError(this.settings.timeoutMs)
          : new ServiceError("UNPROCESSABLE_DOCUMENT", `LibreOffice could not convert the document: it is damaged or not a ${job.format.label} document.`, { cause: error }),
      );
    }
  }

  /**
   * Puts the instance back in service, or restarts it: after a timeout (it was
   * killed), a broken connection (it crashed, even if its exit is not seen
   * yet), a refused document after which it no longer answers, or growth past
   * the memory limit.
   */
  private async afterRun(slot: Slot, outcome: RunOutcome): Promise<void> {
    if (this.closed) return;
    const healthy =
      slot.instance.pid !== undefined && (outcome === "converted" || (outcome === "refused" && (await slot.instance.answers())));
    const memory = healthy ? slot.instance.memoryBytes() : 0;
    if (healthy && memory <= this.settings.memoryLimitBytes) {
      slot.state = "idle";
      return this.dispatch();
    }
    if (memory > this.settings.memoryLimitBytes) {
      this.settings.logger.info({ instance: slot.instance.id, memoryBytes: memory }, "recycling LibreOffice instance over its memory limit");
    }
    slot.state = "starting";
    await slot.instance.kill();
    this.dispatch();
    await this.startSlot(slot);
  }
}
