import { existsSync, readdirSync, statSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, extname, join, relative, resolve } from "node:path";

/** One input file and where its result goes. */
export interface FileJob {
  input: string;
  output: string;
  /** The input as the user named it (or its path under the folder named), for messages. */
  label: string;
}

export interface JobPlan {
  /** Jobs to run, in a stable order. */
  pending: FileJob[];
  /** Jobs whose output is newer than their input (a run before this one made it). */
  upToDate: FileJob[];
}

export interface PlanOptions {
  /** A folder mirroring the inputs' tree; otherwise each output goes beside its input. */
  out?: string;
  /** Whether a file found in a folder is an input (files named on the command line always are). */
  accepts(name: string): boolean;
  /** The output's file name for an input's. */
  outputName(name: string): string;
  /** Run even jobs whose output is up to date. */
  force: boolean;
  /** Files every job reads besides its input (e.g. the fields of `annotate`): an output older than one is out of date. */
  alsoReads?: string[];
}

/**
 * The jobs of `inputs`: files as they are, folders walked (hidden entries
 * skipped). With `out`, a file under a folder input keeps its path below that
 * folder, and a file input lands at the top of `out`. Two inputs that would
 * write one output are refused before anything runs.
 */
export function planJobs(inputs: string[], options: PlanOptions): JobPlan {
  const jobs: FileJob[] = [];
  for (const input of inputs) {
    const path = resolve(input);
    if (!existsSync(path)) throw new Error(`${input}: no such file or folder`);
    if (statSync(path).isDirectory()) {
      for (const file of walk(path).filter((name) => options.accepts(basename(name)))) {
        const below = relative(path, file);
        const output = options.out ? join(resolve(options.out), dirname(below), options.outputName(basename(file))) : join(dirname(file), options.outputName(basename(file)));
        jobs.push({ input: file, output, label: join(input, below) });
      }
    } else {
      const output = join(options.out ? resolve(options.out) : dirname(path), options.outputName(basename(path)));
      jobs.push({ input: path, output, label: input });
    }
  }
  const byOutput = new Map<string, FileJob>();
  for (const job of jobs) {
    const other = byOutput.get(job.output);
    if (other) throw new Error(`${other.label} and ${job.label} would both write ${job.output}`);
    if (job.output === job.input) throw new Error(`${job.label} would be overwritten by its own result`);
    byOutput.set(job.output, job);
  }
  const newestShared = Math.max(0, ...(options.alsoReads ?? []).map((path) => statSync(path).mtimeMs));
  const upToDate = new Set(options.force ? [] : jobs.filter((job) => isUpToDate(job, newestShared)));
  return { pending: jobs.filter((job) => !upToDate.has(job)), upToDate: [...upToDate] };
}

/** "Q3 report.docx" → "Q3 report" + suffix. */
export function replaceExtension(name: string, suffix: string): string {
  return `${name.slice(0, name.length - extname(name).length)}${suffix}`;
}

/**
 * Writes an output whole or not at all: to a temporary name beside it, then
 * renamed, so an interrupted run never leaves a truncated output that a
 * re-run would take as done.
 */
export async function writeOutput(path: string, bytes: Buffer | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.docservice-partial`;
  try {
    await writeFile(partial, bytes);
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

function isUpToDate(job: FileJob, newestShared: number): boolean {
  try {
    return statSync(job.output).mtimeMs >= Math.max(statSync(job.input).mtimeMs, newestShared);
  } catch {
    return false;
  }
}

function walk(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith("."))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) return walk(path);
      return entry.isFile() && !entry.name.endsWith(".docservice-partial") ? [path] : [];
    });
}
