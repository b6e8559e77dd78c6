import { Option, type Command } from "commander";
import { planJobs, type FileJob } from "./file-jobs.js";
import { concurrencyFor, platformClient, positiveInteger, withPlatformOptions, type PlatformFlags } from "./platform-options.js";
import type { DocServiceClient } from "../client/index.js";
import { runJobs } from "./run-jobs.js";

export interface FileCommandFlags extends PlatformFlags {
  out?: string;
  force: boolean;
}

/** A command that runs over files and folders: what it accepts, names, and does with each file. */
export interface FileCommandSpec<Flags extends FileCommandFlags> {
  name: string;
  description: string;
  /** Which of the platform's capacity hints sizes its concurrency. */
  capacity: "convert" | "sign";
  /** Options of its own. */
  options?: Option[];
  accepts(name: string, flags: Flags): boolean;
  outputName(name: string, flags: Flags): string;
  /** Reads what every job needs besides its input (failing before any job runs); returns the files it read. */
  prepare?(flags: Flags): string[];
  /** Does one file's work and writes its output; returns a few words for its line. */
  run(client: DocServiceClient, job: FileJob, flags: Flags): Promise<string>;
}

/**
 * Adds a file command: inputs walked, outputs mirrored under --out (or beside
 * their inputs), those already up to date skipped, bounded concurrency,
 * progress, and exit code 1 when a file failed.
 */
export function addFileCommand<Flags extends FileCommandFlags>(program: Command, spec: FileCommandSpec<Flags>): void {
  const command = program
    .command(spec.name)
    .description(spec.description)
    .argument("<paths...>", "files, or folders to walk")
    .option("--out <dir>", "write the results under this folder, mirroring the inputs' tree (default: beside each input)")
    .option("--force", "redo files whose result is already up to date", false)
    .addOption(new Option("--concurrency <n>", "files at once (default: what the platform's /v1/health suggests, else 4)").argParser(positiveInteger));
  for (const option of spec.options ?? []) command.addOption(option);
  withPlatformOptions(command, true).action(async (paths: string[], flags: Flags) => {
    const client = platformClient(flags, true);
    const plan = planJobs(paths, {
      out: flags.out,
      force: flags.force,
      accepts: (name) => spec.accepts(name, flags),
      outputName: (name) => spec.outputName(name, flags),
      alsoReads: spec.prepare?.(flags),
    });
    if (plan.upToDate.length > 0) process.stderr.write(`${plan.upToDate.length} file(s) already up to date, skipped\n`);
    if (plan.pending.length === 0) return;
    const concurrency = await concurrencyFor(client, spec.capacity, flags);
    const summary = await runJobs(plan.pending, (job) => spec.run(client, job, flags), concurrency);
    process.stderr.write(`${summary.done} done, ${summary.failed.length} failed, ${plan.upToDate.length} skipped\n`);
    if (summary.failed.length > 0 || summary.done + summary.failed.length < plan.pending.length) process.exitCode = 1;
  });
}
