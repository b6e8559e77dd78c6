import { MultiBar, Presets } from "cli-progress";
import type { FileJob } from "./file-jobs.js";

/** What a job did, in a few words for its line (e.g. "→ out/a.pdf", "valid: 2 signatures"). */
export type JobWork = (job: FileJob) => Promise<string>;

export interface RunSummary {
  done: number;
  failed: Array<{ job: FileJob; reason: string }>;
}

/** How progress is shown: a bar with rate and ETA on a terminal, one plain line per file otherwise. */
interface Progress {
  finished(line: string): void;
  failed(line: string): void;
  stop(): void;
}

/**
 * Runs `work` over the jobs, `concurrency` at a time. A job that fails is
 * reported with its reason and the others carry on. On SIGINT no new job
 * starts; those running finish (their outputs are written whole), so a
 * re-run resumes where this one stopped.
 */
export async function runJobs(jobs: FileJob[], work: JobWork, concurrency: number, stream: NodeJS.WriteStream = process.stderr): Promise<RunSummary> {
  const summary: RunSummary = { done: 0, failed: [] };
  const progress = stream.isTTY ? barProgress(jobs.length, stream) : lineProgress(stream);
  let next = 0;
  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
  };
  process.once("SIGINT", interrupt);
  const worker = async () => {
    while (!interrupted && next < jobs.length) {
      const job = jobs[next++];
      try {
        const what = await work(job);
        summary.done++;
        progress.finished(`ok     ${job.label} ${what}`);
      } catch (error) {
        const reason = (error as Error).message;
        summary.failed.push({ job, reason });
        progress.failed(`FAILED ${job.label}: ${reason}`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, jobs.length)) }, worker));
  } finally {
    process.off("SIGINT", interrupt);
    progress.stop();
  }
  if (interrupted) stream.write(`interrupted: ${jobs.length - next} file(s) not started; run the same command again to resume\n`);
  return summary;
}

function lineProgress(stream: NodeJS.WriteStream): Progress {
  return {
    finished: (line) => stream.write(`${line}\n`),
    failed: (line) => stream.write(`${line}\n`),
    stop: () => {},
  };
}

function barProgress(total: number, stream: NodeJS.WriteStream): Progress {
  const started = Date.now();
  const bars = new MultiBar(
    { stream, format: "{bar} {value}/{total} files | {rate}/s | ETA {eta_formatted}", hideCursor: true, clearOnComplete: false },
    Presets.shades_classic,
  );
  const bar = bars.create(total, 0, { rate: "0.0" });
  let count = 0;
  const advance = () => {
    count++;
    bar.increment(1, { rate: (count / Math.max((Date.now() - started) / 1000, 0.001)).toFixed(1) });
  };
  return {
    finished: () => advance(),
    // failures stay above the bar; successes only move it
    failed: (line) => {
      bars.log(`${line}\n`);
      advance();
    },
    stop: () => bars.stop(),
  };
}
