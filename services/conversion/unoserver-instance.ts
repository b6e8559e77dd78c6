import type { ChildProcess } from "node:child_process";
import { mkdirSync, openSync, closeSync } from "node:fs";
import { join } from "node:path";
import xmlrpc from "xmlrpc";
import { freePort } from "../core/free-port.js";
import type { Logger } from "../core/logger.js";
import { unoserverFilterOptions, type LibreOfficeExport } from "./libreoffice-export.js";
import { writeProfileSettings } from "./libreoffice-profile.js";
import { killGroup, spawnGroup } from "./process-groups.js";
import { processTreeRssBytes } from "./process-memory.js";

export interface InstanceSettings {
  /** The unoserver command (from the venv made by scripts/install). */
  unoserverBin: string;
  /** Holds this instance's LibreOffice user profile and log. */
  directory: string;
  startTimeoutMs: number;
  logger: Logger;
}

/** Thrown by convert() when LibreOffice answered with a fault: the document, not the instance, is the problem. */
export class ConversionFault extends Error {}

/**
 * One warm LibreOffice, driven through unoserver's XML-RPC API. unoserver keeps
 * soffice loaded between documents (a cold `soffice --convert-to` costs about
 * a second), restarts nothing by itself, and converts file to file, so large
 * documents never cross XML-RPC as base64. It runs in its own process group,
 * so a kill takes soffice with it.
 */
export class UnoserverInstance {
  private child: ChildProcess | undefined;
  private client: xmlrpc.Client | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly id: number,
    private readonly settings: InstanceSettings,
    /** Called when the process ends without kill() having been asked for. */
    private readonly onUnexpectedExit: (instance: UnoserverInstance) => void,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts unoserver and waits until its XML-RPC server answers. */
  async start(): Promise<void> {
    const [port, unoPort] = [await freePort(), await freePort()];
    mkdirSync(this.settings.directory, { recursive: true });
    const profile = join(this.settings.directory, "profile");
    writeProfileSettings(profile);
    const log = openSync(join(this.settings.directory, "unoserver.log"), "a");
    const child = spawnGroup(
      this.settings.unoserverBin,
      ["--interface", "127.0.0.1", "--port", String(port), "--uno-port", String(unoPort), "--user-installation", profile],
      { stdio: ["ignore", log, log] },
    );
    closeSync(log);
    this.child = child;
    let killed = false;
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        if (this.child === child) this.child = undefined;
        if (!killed && !child.killed) {
          this.settings.logger.warn({ instance: this.id, code, signal }, "LibreOffice instance exited");
          this.onUnexpectedExit(this);
        }
        resolve();
      });
      // A process that never started (unoserver missing) emits "error" and no "exit".
      child.once("error", (error) => {
        if (child.pid !== undefined) return;
        if (this.child === child) this.child = undefined;
        this.settings.logger.error({ instance: this.id, err: error.message }, "unoserver could not be started");
        resolve();
      });
    });
    this.client = xmlrpc.createClient({ host: "127.0.0.1", port, path: "/" });
    const deadline = Date.now() + this.settings.startTimeoutMs;
    while (!(await this.answers())) {
      if (this.child !== child || Date.now() > deadline) {
        killed = true;
        await this.kill();
        throw new Error(`unoserver instance ${this.id} did not start within ${this.settings.startTimeoutMs} ms (see ${this.settings.directory}/unoserver.log)`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Converts a file as `exported` says. Rejects with ConversionFault when LibreOffice cannot read the document. */
  convert(inputPath: string, outputPath: string, importFilter: string, exported: LibreOfficeExport): Promise<void> {
    const client = this.client;
    if (!client || !this.child) return Promise.reject(new Error(`instance ${this.id} is not running`));
    return new Promise((resolve, reject) =>
      client.methodCall("convert", [inputPath, null, outputPath, exported.extension, exported.filter, unoserverFilterOptions(exported), true, importFilter], (error: any) => {
        if (!error) resolve();
        else if (error.faultString) reject(new ConversionFault(String(error.faultString)));
        else reject(error);
      }),
    );
  }

  /** Kills unoserver and its LibreOffice at once (the whole process group) and waits for the exit. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child?.pid) {
      child.kill("SIGKILL");
      killGroup(child.pid);
    }
    await this.exited;
  }

  memoryBytes(): number {
    return this.child?.pid ? processTreeRssBytes(this.child.pid) : 0;
  }

  /** True when unoserver answers within the time and its LibreOffice is alive (info() asks LibreOffice for its filters). */
  answers(timeoutMs = 2000): Promise<boolean> {
    const client = this.client;
    if (!client || !this.child) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      client.methodCall("info", [], (error) => {
        clearTimeout(timer);
        resolve(!error);
      });
    });
  }
}
